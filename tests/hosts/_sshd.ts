/**
 * A fleet on 127.0.0.1 for tests against a real OpenSSH server: one `sshd` per host, run as the
 * current user in the foreground on a free port, with a host key and a client key made by
 * ssh-keygen in a temp dir; an `ssh_config` naming the hosts; and the hosts that misbehave
 * (nothing listening, a listener that never says anything, one that sends an ssh banner and then
 * nothing). Each sshd gives its sessions a temp HOME and PATH (`SetEnv`), so nothing lands in the
 * real home.
 */

import { dirname, join } from "node:path";
import { within } from "../../lib/async.ts";
import { tempDir } from "../_cli.ts";

/** One host of the fleet. */
export interface FleetHost {
  port: number;
  /** Its sessions' HOME; empty for the fake hosts. */
  home: string;
}

/** A running fleet. */
export interface Fleet {
  dir: string;
  /** `ssh -F` this. */
  sshConfig: string;
  /** `gpu-1` (deno on its PATH), `gpu-2` (no deno on its PATH), `gpu-down`, `gpu-silent`, `gpu-hung`. */
  hosts: Record<string, FleetHost>;
  /** Environment for a tyhooks CLI talking to the fleet: TYHOOKS_SSH, a temp HOME, XDG dirs, TMPDIR. */
  env: Record<string, string>;
  /** What the sshds logged, for failure messages. */
  logs(): string;
  stop(): Promise<void>;
}

const HOST_KEY_ALIAS = "tyhooks-test-fleet";

async function which(name: string, extra: string[] = []): Promise<string | undefined> {
  const dirs = [...(Deno.env.get("PATH") ?? "").split(":"), ...extra].filter((d) => d !== "");
  for (const dir of dirs) {
    try {
      const info = await Deno.stat(join(dir, name));
      if (info.isFile && (info.mode ?? 0) & 0o111) return join(dir, name);
    } catch {
      // Not here.
    }
  }
  return undefined;
}

const SSHD = await which("sshd", ["/usr/sbin", "/usr/local/sbin", "/sbin"]);

/** Why the real-ssh tests cannot run here ("" when they can). */
export const SSHD_SKIP_REASON: string = SSHD === undefined
  ? "sshd not found (Debian: apt-get install openssh-server; .ci/run does it when root)"
  : (await which("ssh")) === undefined
  ? "ssh not found"
  : (await which("ssh-keygen")) === undefined
  ? "ssh-keygen not found"
  : "";

async function exec(program: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(program, { args, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder();
  if (!out.success) {
    throw new Error(`${program} ${args.join(" ")} failed: ${text.decode(out.stderr)}`);
  }
  return text.decode(out.stdout);
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** A listener that accepts and keeps every connection, writing `greeting` (if any) and no more. */
function fakeServer(greeting: string | undefined) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: Deno.Conn[] = [];
  const done = (async () => {
    try {
      for await (const conn of listener) {
        conns.push(conn);
        if (greeting !== undefined) {
          conn.write(new TextEncoder().encode(greeting)).catch(() => {});
        }
        // Drain what the client says, so it never blocks on a full socket, and answer nothing.
        conn.readable.pipeTo(new WritableStream()).catch(() => {});
      }
    } catch {
      // Closed.
    }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    async close() {
      listener.close();
      for (const conn of conns) {
        try {
          conn.close();
        } catch {
          // Already closed by the client's end.
        }
      }
      await done;
    },
  };
}

/** Starts the fleet. Call `stop()` in a finally. */
export async function startFleet(): Promise<Fleet> {
  const dir = await tempDir({ prefix: "tyhooks-sshd-" });
  const children: Deno.ChildProcess[] = [];
  const fakes: { close(): Promise<void> }[] = [];
  const logs: string[] = [];
  const stop = async () => {
    for (const child of children) {
      try {
        child.kill("SIGTERM");
      } catch {
        // Already gone.
      }
    }
    await Promise.all(children.map((child) => child.status));
    await Promise.all(fakes.map((fake) => fake.close()));
    await Deno.remove(dir, { recursive: true });
  };
  try {
    await Deno.chmod(dir, 0o700);
    // sshd run by root insists on its privilege separation dir, which the Debian package leaves
    // to systemd to create at boot. It is made here when missing and left in place (empty, on
    // tmpfs): another run of these tests, from another checkout, may be using it right now.
    if (Deno.uid() === 0) await Deno.mkdir("/run/sshd", { mode: 0o755, recursive: true });
    const key = (name: string) =>
      exec("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", name, "-f", join(dir, name)]);
    await key("host_key");
    await key("client_key");
    await Deno.copyFile(join(dir, "client_key.pub"), join(dir, "authorized_keys"));
    const hostKey = await Deno.readTextFile(join(dir, "host_key.pub"));
    await Deno.writeTextFile(join(dir, "known_hosts"), `${HOST_KEY_ALIAS} ${hostKey}`);
    const user = (await exec("id", ["-un"])).trim();

    const deno = dirname(Deno.execPath());
    const hosts: Record<string, FleetHost> = {};
    const real = { "gpu-1": [deno], "gpu-2": [] as string[] };
    for (const [name, extraPath] of Object.entries(real)) {
      const home = join(dir, `home-${name}`);
      await Deno.mkdir(home);
      const port = freePort();
      const path = [join(home, ".local", "bin"), ...extraPath, "/usr/bin", "/bin"].join(":");
      const config = join(dir, `sshd_config-${name}`);
      await Deno.writeTextFile(
        config,
        [
          "ListenAddress 127.0.0.1",
          `Port ${port}`,
          `HostKey ${join(dir, "host_key")}`,
          `AuthorizedKeysFile ${join(dir, "authorized_keys")}`,
          // The temp dir's parents (/tmp) are group- or world-writable.
          "StrictModes no",
          "PubkeyAuthentication yes",
          "PasswordAuthentication no",
          "KbdInteractiveAuthentication no",
          "PermitRootLogin prohibit-password",
          "UsePAM no",
          "PidFile none",
          "PrintMotd no",
          // Sessions live in the temp home, with a PATH the test chose (gpu-2's has no deno).
          `SetEnv HOME=${home} PATH=${path}`,
          "",
        ].join("\n"),
      );
      const child = new Deno.Command(SSHD!, {
        args: ["-D", "-e", "-f", config],
        stdin: "null",
        stdout: "null",
        stderr: "piped",
      }).spawn();
      children.push(child);
      const log = { text: "" };
      logs.push("");
      const index = logs.length - 1;
      const listening = new Promise<void>((resolve, reject) => {
        (async () => {
          const decoder = new TextDecoder();
          for await (const chunk of child.stderr) {
            log.text += decoder.decode(chunk, { stream: true });
            logs[index] = `[sshd ${name}] ${log.text}`;
            if (log.text.includes("Server listening on")) resolve();
          }
          reject(new Error(`sshd for ${name} ended: ${log.text}`));
        })();
      });
      if (!(await within(listening, 15_000))) {
        throw new Error(`sshd for ${name} is not listening: ${log.text}`);
      }
      await listening;
      hosts[name] = { port, home };
    }
    hosts["gpu-down"] = { port: freePort(), home: "" };
    const silent = fakeServer(undefined);
    const hung = fakeServer("SSH-2.0-OpenSSH_9.9\r\n");
    fakes.push(silent, hung);
    hosts["gpu-silent"] = { port: silent.port, home: "" };
    hosts["gpu-hung"] = { port: hung.port, home: "" };

    const sshConfig = join(dir, "ssh_config");
    await Deno.writeTextFile(
      sshConfig,
      [
        ...Object.entries(hosts).flatMap(([name, host]) => [`Host ${name}`, `  Port ${host.port}`]),
        "Host *",
        "  HostName 127.0.0.1",
        `  User ${user}`,
        `  IdentityFile ${join(dir, "client_key")}`,
        "  IdentitiesOnly yes",
        `  UserKnownHostsFile ${join(dir, "known_hosts")}`,
        "  GlobalKnownHostsFile /dev/null",
        `  HostKeyAlias ${HOST_KEY_ALIAS}`,
        "  StrictHostKeyChecking yes",
        "  UpdateHostKeys no",
        "  ControlMaster no",
        "",
      ].join("\n"),
    );
    const local = join(dir, "local");
    await Deno.mkdir(join(local, "tmp"), { recursive: true });
    return {
      dir,
      sshConfig,
      hosts,
      env: {
        TYHOOKS_SSH: `ssh -F '${sshConfig}'`,
        HOME: local,
        XDG_CACHE_HOME: join(local, ".cache"),
        XDG_CONFIG_HOME: join(local, ".config"),
        // hosts sync's scratch dir lands here, where a test can see it is removed.
        TMPDIR: join(local, "tmp"),
      },
      logs: () => logs.join("\n"),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
