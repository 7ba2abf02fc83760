// kobun's own keys on the objects it handles: its annotation prefix, the last-handled
// annotation, its finalizer and its status field. Authors see them (a definition leaves room
// for `status.kobun`, a test looks for the finalizer); handling/progress.ts reads and writes them.

/** The prefix of every annotation kobun writes (and of its finalizer). */
export const KOBUN_PREFIX = "kobun.dev/";
export const BASE_ANNOTATION = `${KOBUN_PREFIX}last-handled-configuration`;
export const FINALIZER = `${KOBUN_PREFIX}finalizer`;
/** `status.kobun`: where the bookkeeping goes on resources with a status subresource. */
export const STATUS_KEY = "kobun";
