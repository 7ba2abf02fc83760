// The HTTPS server of the webhooks (node:tls in front of Bun.serve): POST /validate/<id>, /mutate/<id>
// and /convert/<plural.group>, each answered by its handler. A certificate read from files
// is read again when they change and served to the next TLS handshakes by the same listener
// (listener.ts): no connection is closed or refused by a reload.

import type { AdmissionPeer, Registry } from "../declaring/index.ts";
import type { Logger } from "../util/index.ts";
import { parseReviewBody } from "./body.ts";
import { listenTls, type ClientCertPolicy } from "./listener.ts";
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
  /** Ask callers for a client certificate, verified against this CA (handlers see it as `ctx.peer`). */
  clientCerts?: ClientCertPolicy;
  /** Its webhooks and conversions (those of enabled resources: runtime/resources.ts). */
  registry: Pick<Registry, "webhooks" | "conversions">;
  logger: Logger;
  /**
   * How often files are checked for a new certificate (ms): settings' webhooks.reloadInterval (its
   * default is the schema's).
   */
  reloadIntervalMs: number;
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
  const listener = await listenTls({
    hostname: options.hostname, port: options.port, cert: certificate, maxRequestBodySize: MAX_BODY_BYTES,
    ...(options.clientCerts ? { clientCerts: options.clientCerts } : {}),
    fetch: (request, peer) => route(registry, request, peer, logger),
    error: (error) => {
      logger.error("webhook request failed", { error: error.message });
      return new Response("internal error", { status: 500 });
    },
  });
  const port = listener.port;
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
        listener.setCertificate(next);
        certificate = next;
        logger.info("webhook certificate reloaded", { file: source.certFile });
        options.onReload?.(next.caBundle);
      } catch (error) {
        const message = (error as Error).message;
        logger.error("the new webhook certificate was refused; still serving the old one", { error: message });
      }
    }, options.reloadIntervalMs);
  }
  logger.info("serving webhooks", { address: `${options.hostname}:${port}`, certificate: source.kind });
  return {
    port,
    get caBundle() {
      return certificate.caBundle;
    },
    async stop() {
      clearInterval(timer);
      await listener.stop();
    },
  };
}

async function route(
  registry: Pick<Registry, "webhooks" | "conversions">, request: Request, peer: AdmissionPeer | null, logger: Logger,
): Promise<Response> {
  const [, kind, name] = new URL(request.url).pathname.split("/");
  if (request.method !== "POST") return new Response("only POST\n", { status: 405 });
  try {
    const body = parseReviewBody(await request.text());
    if (kind === "validate" || kind === "mutate") {
      const webhook = registry.webhooks.find((w) => w.kind === kind && w.id === name);
      if (!webhook) return new Response(`no ${kind} webhook ${JSON.stringify(name)}\n`, { status: 404 });
      const headers = Object.fromEntries(request.headers);
      return Response.json(await admit(webhook, readAdmissionRequest(body), { headers, peer }, logger));
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
