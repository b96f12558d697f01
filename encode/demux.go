package encode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/asticode/go-astiav"
)

// Container is a container format that a video from outside may be in: a
// request's video part (package perceiver) or a file given to
// `tracegrid frames --video`. Only these are accepted from outside, because
// libav's other demuxers can name further inputs that libav would open
// itself — an HLS playlist (hls) or a concat script (concat) lists files and
// URLs, and the server would read a local file named inside the data.
type Container string

// The accepted containers, each read by one libav demuxer forced by name
// (libav's probing is never asked to guess).
const (
	// ContainerMP4 is MP4/MOV (ISO base media file format, QuickTime; also
	// M4V and 3GP): libav's "mov" demuxer, with external data references
	// (dref) disabled.
	ContainerMP4 Container = "mp4"
	// ContainerMatroska is Matroska and WebM: libav's "matroska" demuxer.
	ContainerMatroska Container = "matroska"
)

// AcceptedContainers names the accepted containers for messages and docs.
const AcceptedContainers = "MP4/MOV or WebM/Matroska"

// ErrContainer is matched (errors.Is) by the errors of SniffContainer,
// OpenVideoData and OpenVideoFile for data that is not in an accepted
// container.
var ErrContainer = errors.New("encode: not a video container this program reads from outside (" + AcceptedContainers + ")")

// SniffContainer tells the container from the first bytes of a file (12
// are enough): an ISO base media box (size, then ftyp, moov, mdat, free,
// skip, wide or pnot) for MP4/MOV, the EBML magic 1A 45 DF A3 for
// Matroska/WebM. Anything else — an HLS playlist, a concat script, MPEG-TS,
// AVI, a raw stream — is an error matching ErrContainer. Its message never
// quotes the data.
func SniffContainer(head []byte) (Container, error) {
	c, what := sniff(head)
	if c == "" {
		return "", errorf(ErrContainer, "encode: the data is %s, not a video in an accepted container (%s)", what, AcceptedContainers)
	}
	return c, nil
}

// sniff is SniffContainer: the container, or "" and what the data looks
// like, for messages.
func sniff(head []byte) (Container, string) {
	if len(head) >= 4 && bytes.Equal(head[:4], []byte{0x1a, 0x45, 0xdf, 0xa3}) {
		return ContainerMatroska, ""
	}
	if len(head) >= 8 {
		size := binary.BigEndian.Uint32(head[:4])
		switch string(head[4:8]) {
		case "ftyp", "moov", "mdat", "free", "skip", "wide", "pnot":
			if size == 0 || size == 1 || size >= 8 { // 0: to the end, 1: a 64-bit size follows
				return ContainerMP4, ""
			}
		}
	}
	switch {
	case bytes.HasPrefix(head, []byte("#EXTM3U")) || bytes.HasPrefix(head, []byte("\xef\xbb\xbf#EXTM3U")):
		return "", "an HLS playlist (which names other files; they are never opened)"
	case bytes.HasPrefix(head, []byte("ffconcat")):
		return "", "an ffconcat script (which names other files; they are never opened)"
	case len(head) == 0:
		return "", "empty"
	case head[0] == 0x47:
		return "", "MPEG-TS or an unknown format"
	}
	return "", "in an unknown format"
}

// demuxer is the libav demuxer of an accepted container.
func (c Container) demuxer() string {
	if c == ContainerMatroska {
		return "matroska"
	}
	return "mov"
}

// source is a video read through a custom AVIOContext: bytes in memory or
// an open file. libav reads it only through the read and seek callbacks,
// never through a protocol of its own.
type source struct {
	name string // in messages: "the video data", or the file's path
	r    io.ReaderAt
	size int64
	file *os.File // closed by close; nil for data in memory
	c    Container
}

func (s *source) close() {
	if s != nil && s.file != nil {
		s.file.Close()
		s.file = nil
	}
}

// ioBufferSize is the AVIOContext buffer (libav's own default for files
// is 32 KiB); larger reads go to the callback directly.
const ioBufferSize = 64 << 10

// noProtocols is the protocol whitelist of a custom-I/O input: an empty
// list, so that any nested open a demuxer might try (file, http, concat,
// subfile, crypto, …) fails with "Protocol not on whitelist".
const noProtocols = ""

// openSource opens src with its container's demuxer forced by name, over
// a custom AVIOContext, with no protocol allowed for nested opens and the
// demuxer as the only format allowed.
func openSource(src *source) (*input, error) {
	dm := src.c.demuxer()
	return openSourceWith(src, openRules{demuxer: dm, protocols: noProtocols, formats: dm})
}

// openRules are what openSourceWith allows: the demuxer forced, the
// protocol and format whitelists, the input's URL. openSource's are fixed;
// tests vary them to check that each whitelist holds on its own even for
// a demuxer that opens other inputs (the hls demuxer needs a URL to
// resolve the playlist's entries against).
type openRules struct {
	demuxer, protocols, formats, url string
}

func openSourceWith(src *source, rules openRules) (*input, error) {
	initLibav()
	ifmt := astiav.FindInputFormat(rules.demuxer)
	if ifmt == nil {
		return nil, fmt.Errorf("encode: libav has no %s demuxer", rules.demuxer)
	}
	cur := &cursor{r: src.r, size: src.size}
	ioc, err := astiav.AllocIOContext(ioBufferSize, false, cur.read, cur.seek, nil)
	if err != nil {
		return nil, fmt.Errorf("encode: allocating I/O context: %w", err)
	}
	in := &input{fc: astiav.AllocFormatContext(), io: ioc}
	if in.fc == nil {
		ioc.Free()
		return nil, errors.New("encode: allocating demuxer failed")
	}
	in.fc.SetPb(ioc)
	opts := astiav.NewDictionary()
	defer opts.Free()
	for _, kv := range [][2]string{
		{"protocol_whitelist", rules.protocols},
		{"format_whitelist", rules.formats},
		{"enable_drefs", "0"},      // mov: never follow data references to other files
		{"use_absolute_path", "0"}, // mov: (drefs) likewise
	} {
		if err := opts.Set(kv[0], kv[1], 0); err != nil {
			in.fc.Free()
			ioc.Free()
			return nil, fmt.Errorf("encode: demuxer option %s: %w", kv[0], err)
		}
	}
	if err := libavCall("opening "+src.name+" as "+string(src.c), func() error { return in.fc.OpenInput(rules.url, ifmt, opts) }); err != nil {
		// avformat_open_input frees the context on failure, but not a
		// custom I/O context.
		in.fc.Free()
		ioc.Free()
		return nil, err
	}
	if err := in.setup(src.name); err != nil {
		in.close()
		return nil, err
	}
	return in, nil
}

// cursor reads a source for one AVIOContext.
type cursor struct {
	r         io.ReaderAt
	size, off int64
}

func (c *cursor) read(b []byte) (int, error) {
	if c.off >= c.size {
		return 0, astiav.ErrEof
	}
	if rest := c.size - c.off; int64(len(b)) > rest {
		b = b[:rest]
	}
	n, err := c.r.ReadAt(b, c.off)
	c.off += int64(n)
	switch {
	case n > 0:
		return n, nil
	case err == nil || errors.Is(err, io.EOF):
		return 0, astiav.ErrEof
	default:
		return 0, astiav.ErrEio
	}
}

// errEinval is AVERROR(EINVAL), which go-astiav does not name.
var errEinval = astiav.Error(-int(syscall.EINVAL))

// AVSEEK_SIZE and AVSEEK_FORCE (libavformat/avio.h).
const (
	avseekSize  = 0x10000
	avseekForce = 0x20000
)

func (c *cursor) seek(offset int64, whence int) (int64, error) {
	if whence&avseekSize != 0 {
		return c.size, nil
	}
	var pos int64
	switch whence &^ avseekForce {
	case io.SeekStart:
		pos = offset
	case io.SeekCurrent:
		pos = c.off + offset
	case io.SeekEnd:
		pos = c.size + offset
	default:
		return 0, errEinval
	}
	if pos < 0 {
		return 0, errEinval
	}
	c.off = pos
	return pos, nil
}

// OpenVideoData opens a video held in memory for FrameAt, as a video from
// outside: data must be in an accepted container (SniffContainer; else an
// error matching ErrContainer), its demuxer is forced by name and reads
// only data, through a custom AVIOContext — no file, network or other
// protocol can be opened, whatever the data names. Errors never contain a
// path (they call the input "the video data"). data must not change while
// the Video is open.
func OpenVideoData(data []byte) (*Video, error) {
	c, err := SniffContainer(data[:min(len(data), 16)])
	if err != nil {
		return nil, err
	}
	src := &source{name: "the video data", r: bytes.NewReader(data), size: int64(len(data)), c: c}
	in, err := openSource(src)
	if err != nil {
		return nil, err
	}
	return newVideo(src.name, src, in)
}

// OpenVideoFile opens the file at path for FrameAt as a video from outside:
// like OpenVideoData, the file must be in an accepted container (else an
// error matching ErrContainer that names the file) and is read through a
// custom AVIOContext with the demuxer forced, so nothing it names is ever
// opened. Use OpenVideo for this program's own files, in any container.
func OpenVideoFile(path string) (*Video, error) {
	src, err := openFileSource(path)
	if err != nil {
		return nil, err
	}
	in, err := openSource(src)
	if err != nil {
		src.close()
		return nil, err
	}
	return newVideo(path, src, in)
}
