/**
 * Driving a daemon in a benchmark: a load of calls at a given depth, the leanest honest HTTP/1.1
 * client over a unix socket, and what a process spends (CPU time, resident memory), from /proc.
 */

/** The resident memory of `pid`, in KiB (its VmRSS). */
export function rssKb(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
}

/**
 * CPU time (user + system) of `pid` in ms (10 ms ticks); with `children`, of its children
 * instead: those running and those it has reaped.
 */
export function cpuMs(pid: number, children = false): number {
  const fields = (pid: string | number) =>
    Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1].split(" ");
  const own = fields(pid);
  if (!children) return (Number(own[11]) + Number(own[12])) * 10;
  let ticks = Number(own[13]) + Number(own[14]);
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = fields(entry.name);
      if (Number(stat[1]) === pid) ticks += Number(stat[11]) + Number(stat[12]);
    } catch {
      // Gone already.
    }
  }
  return ticks * 10;
}

/**
 * Runs `total` calls of `fn`, `concurrency` at a time (`fn` is told which of them calls it);
 * returns each call's latency.
 */
export async function load(
  total: number,
  concurrency: number,
  fn: (worker: number) => Promise<void>,
): Promise<{ times: number[]; errors: string[]; wallMs: number }> {
  const times: number[] = [];
  const errors: string[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async (_: unknown, index: number) => {
    while (next < total) {
      next++;
      const t = performance.now();
      try {
        await fn(index);
        times.push(performance.now() - t);
      } catch (error) {
        errors.push((error as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { times, errors, wallMs: performance.now() - started };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The leanest honest HTTP/1.1 client: one kept-alive unix-socket connection, each request
 * written whole, the answer's status line, headers and `Content-Length` body read back (an
 * answer without `Content-Length` is an error: the daemon always sends one). It shares the
 * cores with the daemon, and costs a fraction of `fetch`'s CPU per request (the figures say).
 */
export class RawHttp {
  #conn: Deno.Conn;
  #buffer = new Uint8Array(64 * 1024);
  #pending = new Uint8Array(0);
  constructor(conn: Deno.Conn) {
    this.#conn = conn;
  }
  static async connect(path: string): Promise<RawHttp> {
    return new RawHttp(await Deno.connect({ transport: "unix", path }));
  }
  /** Bytes of a request, to send many times. */
  static request(method: string, path: string, body = ""): Uint8Array {
    const bytes = encoder.encode(body);
    const head = `${method} ${path} HTTP/1.1\r\nhost: localhost\r\n` +
      `content-type: application/json\r\ncontent-length: ${bytes.length}\r\n\r\n`;
    return new Uint8Array([...encoder.encode(head), ...bytes]);
  }
  async send(request: Uint8Array): Promise<{ status: number; body: string }> {
    for (let written = 0; written < request.length;) {
      written += await this.#conn.write(request.subarray(written));
    }
    let end: number;
    while ((end = headEnd(this.#pending)) < 0) await this.#fill();
    const head = decoder.decode(this.#pending.subarray(0, end));
    const length = /\r\ncontent-length: *(\d+)/i.exec(head)?.[1];
    if (length === undefined) throw new Error(`No content-length in the answer: ${head}`);
    const total = end + 4 + Number(length);
    while (this.#pending.length < total) await this.#fill();
    const body = decoder.decode(this.#pending.subarray(end + 4, total));
    this.#pending = this.#pending.subarray(total);
    return { status: Number(head.slice(9, 12)), body };
  }
  async #fill(): Promise<void> {
    const n = await this.#conn.read(this.#buffer);
    if (n === null) throw new Error("The daemon closed the connection");
    const next = new Uint8Array(this.#pending.length + n);
    next.set(this.#pending);
    next.set(this.#buffer.subarray(0, n), this.#pending.length);
    this.#pending = next;
  }
  close(): void {
    this.#conn.close();
  }
}

function headEnd(bytes: Uint8Array): number {
  for (let i = bytes.indexOf(13); i >= 0 && i + 3 < bytes.length; i = bytes.indexOf(13, i + 1)) {
    if (bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) return i;
  }
  return -1;
}

/**
 * `total` requests over `conns` connections, one in flight on each; the latencies, errors,
 * wall time, and the CPU ms the client (this process) and the daemon (and its children) spent.
 */
export async function loadRaw(
  socket: string,
  daemonPid: number,
  options: { total: number; conns: number; request: Uint8Array; check: (body: string) => boolean },
) {
  const conns = await Promise.all(
    Array.from({ length: options.conns }, () => RawHttp.connect(socket)),
  );
  const client = cpuMs(Deno.pid);
  const daemon = cpuMs(daemonPid);
  const children = cpuMs(daemonPid, true);
  try {
    const result = await load(options.total, options.conns, async (worker) => {
      const answer = await conns[worker].send(options.request);
      if (answer.status !== 200 || !options.check(answer.body)) {
        throw new Error(`HTTP ${answer.status}: ${answer.body}`);
      }
    });
    return {
      ...result,
      cpu: {
        client: cpuMs(Deno.pid) - client,
        daemon: cpuMs(daemonPid) - daemon,
        children: cpuMs(daemonPid, true) - children,
      },
    };
  } finally {
    for (const conn of conns) conn.close();
  }
}
