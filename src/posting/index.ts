// posting/: Kubernetes Events about handled objects, queued by post() (which never blocks or
// throws) and sent in the background, correlated as client-go's recorder does; see poster.ts.
// Must never: post about Event objects (it would feed itself), retry forever, hold a handler up,
// or import handling/.
export { EventPoster, type EventType, type PosterOptions } from "./poster.ts";
