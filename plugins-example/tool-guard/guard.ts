#!/usr/bin/env -S deno run --quiet --no-config --no-lock
/**
 * A pre_tool_call guard: blocks shell commands that destroy what cannot be rebuilt (a recursive
 * rm of / or of a home dir or top-level system dir, a force push, formatting or overwriting a
 * disk) and allows everything else. It reads the shell command the way a shell splits it, so
 * `rm -rf /tmp/build` passes, and it judges only shell tools, so a file whose text merely
 * mentions `git push --force` is written.
 *
 * Protocol: one JSON request per line on stdin ({"hook","tool","args",...}), one answer per line
 * on stdout ({"action":"allow"|"block","reason"}). Written as a read-loop, it serves a one-shot
 * call (one line, then end of input) and the daemon's persistent mode (many lines) alike.
 * Needs only Deno (no permission: stdin and stdout are always allowed).
 */

/** Tools whose args carry a shell command. */
const SHELL_TOOLS = /^(bash|sh|shell|zsh|exec|terminal|run_shell_command|run_terminal_cmd)$/i;

/** Paths whose recursive removal is never routine: /, home dirs, top-level system dirs. */
const PRECIOUS =
  /^(\/|~|~[A-Za-z0-9._-]*|\$HOME|\$\{HOME\}|\/(home|Users)\/[^/]+|\/(bin|boot|dev|etc|home|lib|lib32|lib64|opt|proc|root|sbin|srv|sys|usr|var|Users|System|Library|Applications))\/?\*?$/;

/** Answers one request line. */
export function judge(line: string): { action: "allow" | "block"; reason: string } {
  let request: { tool?: unknown; args?: unknown };
  try {
    request = JSON.parse(line);
  } catch {
    return { action: "block", reason: "tool-guard could not read the request (not JSON)" };
  }
  if (typeof request.tool !== "string" || !SHELL_TOOLS.test(request.tool)) {
    return { action: "allow", reason: "" };
  }
  const args = request.args as Record<string, unknown> | string | null | undefined;
  const command = typeof args === "string"
    ? args
    : [args?.command, args?.cmd, args?.script].find((c) => typeof c === "string") as string;
  if (command === undefined) return { action: "allow", reason: "" };
  for (const words of commands(command)) {
    const why = destructive(words);
    if (why !== null) return { action: "block", reason: `destructive shell command: ${why}` };
  }
  return { action: "allow", reason: "" };
}

/** Splits a command line into simple commands (at ; & | newlines), each into words. */
function commands(line: string): string[][] {
  const out: string[][] = [];
  let words: string[] = [];
  let word: string | null = null;
  let quote: "'" | '"' | null = null;
  const endWord = () => {
    if (word !== null) words.push(word);
    word = null;
  };
  const endCommand = () => {
    endWord();
    if (words.length > 0) out.push(words);
    words = [];
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote !== null) {
      if (c === quote) quote = null;
      else if (c === "\\" && quote === '"' && i + 1 < line.length) word += line[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      word ??= "";
    } else if (c === "\\" && i + 1 < line.length) {
      word = (word ?? "") + line[++i];
    } else if (/\s/.test(c) && c !== "\n") {
      endWord();
    } else if (";&|\n()".includes(c)) {
      endCommand();
    } else {
      word = (word ?? "") + c;
    }
  }
  endCommand();
  return out;
}

/** Why this simple command is destructive, or null. */
function destructive(all: string[]): string | null {
  // Skip what only wraps a command: sudo, env, VAR=value, nohup, time, command, exec.
  let i = 0;
  while (
    i < all.length &&
    (/^(sudo|doas|env|nohup|time|command|exec|nice)$/.test(all[i]) ||
      /^[A-Za-z_][A-Za-z0-9_]*=/.test(all[i]) || (i > 0 && /^-/.test(all[i]) && all[0] === "sudo"))
  ) i++;
  const [name, ...args] = all.slice(i);
  if (name === undefined) return null;
  const program = name.split("/").at(-1)!;
  if (program === "rm") {
    const options = args.filter((a) => a.startsWith("-") && a !== "-" && a !== "--");
    const recursive = options.some((o) => o === "--recursive" || /^-[a-zA-Z]*[rR]/.test(o));
    const targets = args.filter((a) => !a.startsWith("-") || a === "-");
    const precious = targets.find((t) => PRECIOUS.test(t));
    if (options.includes("--no-preserve-root")) return "rm --no-preserve-root";
    if (recursive && precious !== undefined) return `recursive rm of ${precious}`;
    return null;
  }
  if (program === "git" && args.includes("push")) {
    const after = args.slice(args.indexOf("push") + 1);
    const force = after.find((a) =>
      a === "--force" || a === "-f" || /^-[a-zA-Z]*f[a-zA-Z]*$/.test(a) ||
      (/^\+[^+]/.test(a) && !a.startsWith("+-"))
    );
    if (force !== undefined) return `git push ${force} (use --force-with-lease)`;
    return null;
  }
  if (/^mkfs(\..+)?$/.test(program)) return `${program} formats a disk`;
  if (program === "dd") {
    const target = args.find((a) => /^of=\/dev\/(sd|hd|vd|xvd|nvme|disk|mmcblk)/.test(a));
    if (target !== undefined) return `dd ${target} overwrites a disk`;
  }
  return null;
}

if (import.meta.main) {
  const encoder = new TextEncoder();
  let buffered = "";
  const answer = (line: string) => {
    if (line.trim() === "") return;
    Deno.stdout.writeSync(encoder.encode(JSON.stringify(judge(line)) + "\n"));
  };
  for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
    buffered += chunk;
    let end;
    while ((end = buffered.indexOf("\n")) !== -1) {
      answer(buffered.slice(0, end));
      buffered = buffered.slice(end + 1);
    }
  }
  answer(buffered);
}
