package client

import "maps"

// mergeBody is base with over merged into it: objects are merged key by
// key at every depth, any other value of over replaces base's. Neither
// argument is modified. A request's own fields (Request.Body) go over the
// model's ExtraBody this way, so that extra_body's mm_processor_kwargs
// (say max_pixels) and the request's (fps, do_sample_frames) both reach
// the server.
func mergeBody(base, over any) any {
	b, ok1 := base.(map[string]any)
	o, ok2 := over.(map[string]any)
	if !ok1 || !ok2 {
		return over
	}
	out := maps.Clone(b)
	for k, v := range o {
		if old, ok := out[k]; ok {
			out[k] = mergeBody(old, v)
		} else {
			out[k] = v
		}
	}
	return out
}
