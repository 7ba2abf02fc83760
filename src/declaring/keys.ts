// kobun's own keys on the objects it handles: its annotation prefix, the last-handled
// annotation, its finalizer and its status field. Authors see them (a definition leaves room
// for `status.kobun`, a test looks for the finalizer); handling/progress.ts reads and writes them.

/** The prefix of every annotation kobun writes (and of its finalizer). */
export const KOBUN_PREFIX = "kobun.dev/";
export const BASE_ANNOTATION = `${KOBUN_PREFIX}last-handled-configuration`;
export const FINALIZER = `${KOBUN_PREFIX}finalizer`;
/** `status.kobun`: where the bookkeeping goes on resources with a status subresource. */
export const STATUS_KEY = "kobun";

/** The annotation a handler's progress is kept in (no status subresource): a qualified name, ≤ 63 after the prefix. */
export function progressAnnotation(id: string): string {
  let name = id.replace(/[^A-Za-z0-9_.-]+/g, ".").replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "") || "handler";
  if (name.length > 63) name = `${name.slice(0, 54)}-${Bun.hash(id).toString(16).slice(0, 8)}`;
  return KOBUN_PREFIX + name;
}

/** Why `id` cannot be a handler's: its result or progress would be written over kobun's own keys; else undefined. */
export function reservedId(id: string): string | undefined {
  if (id === "") return "an id must not be empty";
  if (id === STATUS_KEY) return `its result would be written over status.${STATUS_KEY}, kobun's progress and diff base`;
  if (progressAnnotation(id) === BASE_ANNOTATION) {
    return `its progress would be written over ${BASE_ANNOTATION}, kobun's diff base`;
  }
  return undefined;
}
