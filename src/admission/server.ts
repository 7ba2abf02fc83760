// The HTTPS server of the webhooks (Bun.serve with TLS): POST /validate/<id>, /mutate/<id>
// and /convert/<plural.group>, each answered by its handler. A certificate read from files
// is read again when they change: Bun cannot swap the certificate of a listening server, so
// a new server takes the same port (SO_REUSEPORT) before the old one stops, and no
// connection is refused in between.

import type { Registry } from "../handling/registry.ts";
import type { Logger } from "../util/log.ts";
import { parseReviewBody } from "./body.ts";
import { readCertificateFiles, servingCertificate, type CertSource, type ServingCertificate } from "./certs.ts";
import { convertReview, readConversionRequest } from "./conversion.ts";
import { admit, BadReviewError, readAdmissionRequest } from "./review.ts";

/** An AdmissionReview holds at most two objects of 1.5 MiB (etcd's limit) and some metadata. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface WebhookServerOptions {
  hostname: string;
  /** 0 = a free port. */
  port: number;
  certs: CertSource;
  /** Its webhooks and conversions (those of enabled resources: runtime/resources.ts). */
  registry: Pick<Registry, "webhooks" | "conversions">;
  logger: Logger;
  /** How often files are checked for a new certificate (ms). */
  reloadIntervalMs?: number;
  /** Called after a new certificate from files is served (with its caFile's CA, if any). */
  onReload?(caBundle: string | undefined): void;
}

export interface WebhookServer {
  /** The port it listens on. */
  readonly port: number;
  /** The CA to trust (self-signed, or the files' caFile). */
  readonly caBundle: string | undefined;
  stop(): Promise<void>;
}

export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const { registry, logger } = options;
  let certificate = await servingCertificate(options.certs);
  const serve = (port: number, cert: ServingCertificate) =>
    Bun.serve({
      hostname: options.hostname, port, reusePort: true, maxRequestBodySize: MAX_BODY_BYTES,
      tls: { cert: cert.cert, key: cert.key },
      fetch: (request) => route(registry, request, logger),
      error: (error) => {
        logger.error("webhook request failed", { error: error.message });
        return new Response("internal error", { status: 500 });
      },
    });
  // SO_REUSEPORT would let a second operator share the port unnoticed: refuse a taken one first.
  if (options.port !== 0) portIsFree(options.hostname, options.port);
  let server = serve(options.port, certificate);
  const port = server.port!;
  let timer: ReturnType<typeof setInterval> | undefined;
  const source = options.certs;
  if (source.kind === "files") {
    timer = setInterval(() => {
      let next: ServingCertificate;
      try {
        next = readCertificateFiles(source);
      } catch (error) {
        // Mid-rotation (one file written, not the other): keep serving the old one, try again.
        logger.warn("cannot read the new webhook certificate yet", { error: (error as Error).message });
        return;
      }
      if (next.cert === certificate.cert && next.key === certificate.key) return;
      try {
        const replacement = serve(port, next);
        const old = server;
        server = replacement;
        certificate = next;
        void old.stop();
        logger.info("webhook certificate reloaded", { file: source.certFile });
        options.onReload?.(next.caBundle);
      } catch (error) {
        logger.error("the new webhook certificate was refused; still serving the old one", { error: (error as Error).message });
      }
    }, options.reloadIntervalMs ?? 10_000);
  }
  logger.info("serving webhooks", { address: `${options.hostname}:${port}`, certificate: source.kind });
  return {
    port,
    get caBundle() {
      return certificate.caBundle;
    },
    async stop() {
      clearInterval(timer);
      await server.stop(true);
    },
  };
}

function portIsFree(hostname: string, port: number): void {
  try {
    Bun.listen({ hostname, port, socket: { data() {} } }).stop(true);
  } catch (error) {
    throw new Error(`the port is taken, or may not be bound here (${(error as Error).message})`);
  }
}

async function route(registry: Pick<Registry, "webhooks" | "conversions">, request: Request, logger: Logger): Promise<Response> {
  const [, kind, name] = new URL(request.url).pathname.split("/");
  if (request.method !== "POST") return new Response("only POST\n", { status: 405 });
  try {
    const body = parseReviewBody(await request.text());
    if (kind === "validate" || kind === "mutate") {
      const webhook = registry.webhooks.find((w) => w.kind === kind && w.id === name);
      if (!webhook) return new Response(`no ${kind} webhook ${JSON.stringify(name)}\n`, { status: 404 });
      return Response.json(await admit(webhook, readAdmissionRequest(body), logger));
    }
    if (kind === "convert") {
      const spec = registry.conversions.find((c) => `${c.wanted.name}.${c.wanted.group}` === name);
      if (!spec) return new Response(`no conversion for ${JSON.stringify(name)}\n`, { status: 404 });
      return Response.json(await convertReview(spec, readConversionRequest(body), logger));
    }
  } catch (error) {
    if (error instanceof BadReviewError) return new Response(`${error.message}\n`, { status: 400 });
    throw error;
  }
  return new Response("not found: POST /validate/<id>, /mutate/<id> or /convert/<plural.group>\n", { status: 404 });
}
