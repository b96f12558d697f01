// Package perceiver is the reference perceiver: a classical (non-neural)
// event detector behind the OpenAI chat-completions protocol. Like a model,
// it reads only what a request holds — the text and the pixels of its
// images or video — never traces, file names, clip ids or any hidden
// field. Because it sees exactly the frames a sampling policy supplies, its
// capability surface is what those frames allow, which separates sampling
// limits from model limits (DESIGN.md, "The reference perceiver";
// docs/perceiver.md has the details, the measured accuracy and the limits).
//
// # Reading a request
//
// ReadMessages turns chat messages into an Input: the question (system and
// user text without frame labels) and the pictures in shown order. Each
// image's time comes from the text part just before it, the frame label
// of package chat ("Frame 3 of 96 at t = 0.500 s"); a video part is sampled
// at Limits.VideoRate frames per second (t_j = j/rate) with libav (package
// encode). Images must be base64 data URLs of PNG or JPEG pictures; any
// other input is an *InputError. Analysis sorts the frames by their label
// times, so shuffled frames give the same answer as ordered ones; frames
// without any label are taken in shown order, and events are then placed
// at frame positions instead of times.
//
// # What is asked
//
// InferDomain reads the question for the events it names (ball, wall,
// bounce → bounce_ball; blink, light up, flash → blinking; transition,
// highlight, state machine → state_machine; a colour followed by cube(s)
// or sphere(s), as in CountVideoBench's "How many red cubes are in this
// video?" → objects, whose colour and shape ObjectsQuestion reads;
// weighted keyword counts, a tie or no match meaning unknown). An unknown question, or no frames, gets a
// reply that says so and states no count. WantsLedger decides the format:
// a question asking for timestamps, a list of every event, a running
// count or step-by-step work gets one ledger line per event, "mm:ss.ss —
// attribute — running count k", then "Final answer: \boxed{N}"; otherwise
// (or when the question asks for the number only) one sentence ending in
// \boxed{N}. Objects are always answered with the sentence.
//
// # Image analysis
//
// Every frame is converted to 8-bit RGB. The background is the most common
// colour of the first frame (it must cover at least half of it, or the
// frames show no scene of these domains); a pixel is foreground when a
// channel differs from it by more than 32.
//
// bounce_ball: the walls are the rows and columns that are foreground over
// more than half the frame; their inner edges are located to a fraction of
// a pixel from the wall's coverage of the rows next to them. The ball is
// the largest blob inside the box; in every frame its centre is the
// centroid of the pixels' projection onto the ball's colour (anti-aliased
// edges count by coverage) and its radius follows from that blob's area. A
// contact is a reversal of the centre's motion on one axis whose turning
// frame is no farther from the wall (inner edge ∓ radius) than the ball
// moves in one interval; a kink that reverses both axes is one contact, on
// the wall its turning point is nearer to. Its time: where the frames
// before and after show straight motion (frames collinear in the plane),
// the meeting point of the incoming and outgoing lines (position against
// time) — the contact time interpolated at constant speed; else the frame
// where the ball touches the wall; else when the one known straight motion
// reaches the wall. The attribute is the wall.
//
// blinking: the lamp is the largest shape in the first frame (an outline
// when off, filled when on; its bounding box centres it either way). A
// frame shows it on when more than half of a central disk (0.35 of its
// half-size) is foreground. Each off→on change (and a first frame already
// on) is a blink, at the time of the first frame showing it on.
//
// state_machine: the highlighted state is the largest solid, roughly round
// blob (its pixels fill at least half its bounding box, which outlines,
// arrows and text never do). Blob centres are grouped into node positions;
// a change of position between consecutive frames is a transition at the
// first frame showing the new one. Labels are read from the first frame in
// which a node is highlighted (dark text on the fill) by template matching
// against Go Regular glyphs of a capital letter with an optional digit, the
// answer parser's label form, with sub-pixel box fitting; labels are given
// only when every node reads differently, else the ledger numbers the
// nodes by first highlight and states no labels.
//
// objects: the pixels of the asked colour are those whose hue is nearest
// that colour's among eight named hues, with saturation ≥ 0.3 and a
// smallest channel below 128 (the ground is white with grey lines); their
// 8-connected components are blobs. The camera turns about its centre, so
// two frames are related by the rotation homography K R K⁻¹ whatever the
// depth: K is a pinhole with the renderer's 45° vertical field of view and
// square pixels, assumed like a known lens. Each frame's rotation is found
// by a grid search over yaw and pitch that lays its whole blobs' centroids
// onto the directions seen so far, refined by a least-squares fit of all
// three angles (Horn's quaternion method), then refitted against the
// directions of all frames. The world's vertical is the normal of the
// frames' horizontal axes. Every frame's mask is then laid onto one mosaic
// over azimuth and elevation, where a direction is the colour when most
// frames that see it say so; every object appears there once, however the
// frames cut or merged it. Each mosaic blob counts as round(ratio / 0.92)
// objects, ratio being its solid angle over one object's at its elevation
// (∝ sin² of the elevation on a ground plane, fitted to the blobs), or as
// many as its distance transform has clear peaks if more.
//
// # Serving
//
// Handler serves the detector over HTTP: POST /v1/chat/completions, GET
// /v1/models, OpenAI-style errors, bearer-token authentication checked
// before routing on every /v1 path (401 for an unknown path without a
// token), a body limit and a deadline on reading the whole body (408; the
// body is read before an analysis slot is taken, so a slow client holds
// none), bounded concurrency with a bounded wait (429 and Retry-After
// beyond it) and token usage counted as documented in usage.go. Video parts
// are accepted only as MP4/MOV or WebM/Matroska and demuxed from memory
// with no libav protocol, so a playlist naming a local file reads nothing.
// NewServer builds the http.Server with every limit; `tracegrid serve`
// runs it (docs/limits.md).
package perceiver
