package gpu

import (
	"unsafe"

	"github.com/go-gl/gl/v3.3-core/gl"
)

// atlasTexture is the glyph atlas uploaded as a mipmapped R8 texture.
type atlasTexture struct {
	id uint32
}

// newAtlasTexture uploads a's coverage image to texture unit 0, where it
// stays bound: no other pass uses textures.
func newAtlasTexture(a *fontAtlas) (*atlasTexture, error) {
	img := a.img
	t := &atlasTexture{}
	gl.GenTextures(1, &t.id)
	gl.ActiveTexture(gl.TEXTURE0)
	gl.BindTexture(gl.TEXTURE_2D, t.id)
	gl.PixelStorei(gl.UNPACK_ALIGNMENT, 1)
	gl.PixelStorei(gl.UNPACK_ROW_LENGTH, int32(img.Stride))
	gl.TexImage2D(gl.TEXTURE_2D, 0, gl.R8, int32(img.Rect.Dx()), int32(img.Rect.Dy()), 0,
		gl.RED, gl.UNSIGNED_BYTE, unsafe.Pointer(&img.Pix[0]))
	gl.PixelStorei(gl.UNPACK_ROW_LENGTH, 0)
	// Text is mostly smaller than the atlas glyphs: trilinear filtering over
	// mipmaps, stopping at the level where cells still do not share texels.
	gl.TexParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAX_LEVEL, atlasMaxLevel)
	gl.TexParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.LINEAR_MIPMAP_LINEAR)
	gl.TexParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.LINEAR)
	gl.TexParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE)
	gl.TexParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE)
	gl.GenerateMipmap(gl.TEXTURE_2D)
	if err := glCheck("uploading the glyph atlas"); err != nil {
		t.release()
		return nil, err
	}
	return t, nil
}

// release deletes the texture; nil-safe and idempotent.
func (t *atlasTexture) release() {
	if t == nil || t.id == 0 {
		return
	}
	gl.DeleteTextures(1, &t.id)
	t.id = 0
}
