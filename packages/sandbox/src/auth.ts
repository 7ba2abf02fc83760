// Who may talk to a sandbox. `kobun dev` runs one for as long as the developer likes, on a
// machine other people may share: it asks for "token" mode, where a random bearer token,
// made per start and written only into the sandbox's 0600 kubeconfig, is required for every
// request (401 otherwise, as a kube-apiserver without anonymous auth answers). "open" mode
// (the default when no token is given) lets anyone on 127.0.0.1 in as system:masters: only
// for a test process's own short-lived sandbox, which plain `fetch` calls talk to.

// Bun's globals, not node:crypto: a bundle hoists every static import of a builtin to its
// start, so even a `kobun run` that never starts a sandbox would load node:crypto (~3 MB RSS).

export type SandboxAuth = "open" | "token";

/** 256 random bits, URL-safe: the admin token of one sandbox run. */
export function generatedToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
}

/** Whether an Authorization header carries exactly `Bearer <token>`, compared in constant time. */
export function bearerMatches(header: string | null, token: string): boolean {
  if (!header) return false;
  // Digests have a fixed length, so neither the comparison nor its early exit leaks the token.
  const digest = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest();
  return crypto.timingSafeEqual(digest(header), digest(`Bearer ${token}`));
}
