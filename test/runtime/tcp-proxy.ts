// A TCP proxy on 127.0.0.1 in front of a server, so that a test can cut one client's network
// path and no other: `blackhole()` keeps every connection open but forwards nothing any more,
// and accepts new connections without ever answering them (a dead path: requests hang, no
// error comes back); `silenceOpen()` does that to the connections open now only, and new ones
// pass (a middlebox that lost its state); `close()` ends every connection and stops listening.

import type { Socket } from "bun";

export interface TcpProxy {
  /** http(s)://127.0.0.1:<port>: the proxied server's scheme with the proxy's address. */
  url: string;
  blackhole(): void;
  silenceOpen(): void;
  close(): void;
  /** Bytes forwarded from the server to the client so far (what the client received). */
  readonly bytesReceived: number;
}

/** Writes to a socket without losing what it cannot take at once (resumed on drain). */
class Outbox {
  private readonly queue: Uint8Array[] = [];
  constructor(private readonly socket: Socket<unknown>) {}

  write(chunk: Uint8Array): void {
    if (this.queue.length === 0) {
      const n = this.socket.write(chunk);
      if (n >= chunk.length) return;
      chunk = chunk.subarray(Math.max(0, n));
    }
    this.queue.push(chunk.slice());
  }

  drain(): void {
    while (this.queue.length > 0) {
      const chunk = this.queue[0]!;
      const n = this.socket.write(chunk);
      if (n < chunk.length) {
        this.queue[0] = chunk.subarray(Math.max(0, n));
        return;
      }
      this.queue.shift();
    }
  }
}

interface Leg {
  /** Towards the client (set on accept) and towards the server (once connected). */
  toClient: Outbox;
  toServer?: Outbox;
  upstream?: Socket<unknown>;
  /** Bytes from the client before the upstream connection was open. */
  early: Uint8Array[];
  /** Forwards nothing any more, either way (silenceOpen). */
  silent?: boolean;
}

export function startTcpProxy(target: URL): TcpProxy {
  let cut = false;
  let received = 0;
  const sockets = new Set<Socket<unknown>>();
  const legs = new Set<Leg>();
  const listener = Bun.listen<Leg>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(client) {
        sockets.add(client as Socket<unknown>);
        client.data = { toClient: new Outbox(client as Socket<unknown>), early: [] };
        if (cut) return;
        const leg = client.data;
        legs.add(leg);
        void Bun.connect<null>({
          hostname: target.hostname,
          port: Number(target.port) || (target.protocol === "https:" ? 443 : 80),
          socket: {
            open(upstream) {
              sockets.add(upstream as Socket<unknown>);
              leg.upstream = upstream as Socket<unknown>;
              leg.toServer = new Outbox(upstream as Socket<unknown>);
              for (const chunk of leg.early.splice(0)) leg.toServer.write(chunk);
            },
            data(_upstream, chunk) {
              if (cut || leg.silent) return;
              received += chunk.length;
              leg.toClient.write(chunk);
            },
            drain() {
              leg.toServer?.drain();
            },
            close() {
              if (!cut && !leg.silent) client.end();
            },
            error() {
              client.end();
            },
          },
        }).catch(() => client.end());
      },
      data(client, chunk) {
        if (cut || client.data.silent) return;
        if (client.data.toServer) client.data.toServer.write(chunk);
        else client.data.early.push(chunk.slice());
      },
      drain(client) {
        client.data.toClient.drain();
      },
      close(client) {
        sockets.delete(client as Socket<unknown>);
        legs.delete(client.data);
        if (!cut) client.data.upstream?.end();
      },
      error(client) {
        client.data.upstream?.end();
      },
    },
  });
  const url = `${target.protocol}//127.0.0.1:${listener.port}`;
  return {
    url,
    get bytesReceived() {
      return received;
    },
    blackhole() {
      cut = true;
    },
    silenceOpen() {
      for (const leg of legs) leg.silent = true;
    },
    close() {
      cut = true;
      listener.stop(true);
      for (const socket of sockets) socket.end();
      sockets.clear();
    },
  };
}
