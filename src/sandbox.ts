// `kobun/sandbox`: the face of the @kobun/sandbox package (packages/sandbox), the embedded
// Kubernetes API server emulator that `kobun dev` and tests run against. It lives in a package
// of its own so that a production binary does not carry it (kobun build leaves it out unless
// --with-sandbox); kobun's package bundles it, so users import it from here as before.
// Must never add code of its own: src/ reaches the sandbox only through the package's entry.

export * from "@kobun/sandbox";
