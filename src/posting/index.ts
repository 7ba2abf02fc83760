// posting/: Kubernetes Events, posted in the background; see poster.ts.
export { EventPoster, type EventType, type PosterOptions } from "./poster.ts";
