// Package preview is the logic of tracegrid-preview that needs no window:
// a Player holds the playhead (time, speed ¼× to 4×, pause), steps by clip
// frames, jumps between true events, holds a sampling policy's frames
// until the next, and builds the draw list of what the window shows — the
// clip frame at the playhead (the same items frames.Source renders, so
// the pixels are the clip's) followed, when the overlay is on, by the
// overlay's items (status text, the true events, a timeline), which the
// gpu renderer draws like any other. Keys arrive as Key values from the
// window or from a script (ParseScript), so every behaviour is tested
// without a display.
//
// Time. The playhead t is in seconds in [0, D]; the clip frame at t is the
// last one at or before it (frames.ShownFrame). Playing advances t by the
// real time that passed times the speed and pauses at D; space at D plays
// again from 0. left/right move to the previous/next clip frame's time
// and pause; shift+left/right move to the previous/next true event time
// (strictly before/after t) and pause; an event at exactly t has happened
// (trace.Replay), so the running count includes it.
//
// Policy. With a plan, the picture at t is the clip frame of the last
// sampled frame whose sample time is at or before t (held until the next),
// or a blank canvas (BlankColor) before the first; its label is
// chat.Labels.Label(position, frames, sample time), exactly the text eval
// sends before that image. On the timeline the clip frames the samples
// show are blue and the rest (what the model never sees) grey.
//
// Overlay. Sizes scale with the canvas height (13-pixel text at 480
// lines). OverlayBounds gives the rectangles the overlay draws in; outside
// them a frame with the overlay is pixel-identical to one without.
package preview
