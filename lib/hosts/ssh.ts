/**
 * The ssh that default probes and `hosts sync` run: `$TYHOOKS_SSH` split into words as a shell
 * splits them (as git reads `GIT_SSH_COMMAND`), else `ssh`, followed by tyhooks' own options.
 * OpenSSH reads `~/.ssh/config` from the passwd home, not `$HOME`, so this variable is how users
 * and tests point ssh at another config (`TYHOOKS_SSH="ssh -F ~/.ssh/fleet_config"`).
 *
 * @module
 */

import { RunError } from "../errors.ts";

/**
 * Options tyhooks adds after the ssh command: never prompt (a password or host-key prompt would
 * hang until the deadline), and give up connecting within 2 s, under pick-host's default 3 s
 * deadline, so an unreachable host fails with ssh's own message rather than a bare timeout.
 */
export const SSH_OPTIONS: readonly string[] = ["-o", "BatchMode=yes", "-o", "ConnectTimeout=2"];

export const SSH_ENV = "TYHOOKS_SSH";

/** The ssh words before a destination: `$TYHOOKS_SSH` split (else `ssh`), then the options. */
export function sshCommand(value: string | undefined = Deno.env.get(SSH_ENV)): string[] {
  const words = value === undefined || value.trim() === "" ? ["ssh"] : splitWords(value);
  if (words.length === 0) words.push("ssh");
  return [...words, ...SSH_OPTIONS];
}

// Characters a shell would treat as syntax (expansion, redirection, lists, globs); a word split
// cannot honour them, so they must be quoted to be taken literally.
const SYNTAX = new Set(["$", "`", "|", "&", ";", "<", ">", "(", ")", "*", "?", "[", "{", "}"]);

/**
 * Splits `text` into words as a POSIX shell does, quotes and backslashes included, a leading `~`
 * as `$HOME`, but no expansion: unquoted shell syntax is a `RunError` naming the variable `name`.
 */
export function splitWords(text: string, name: string = SSH_ENV): string[] {
  const fail = (detail: string): never => {
    throw new RunError(
      `Cannot use $${name} "${text}": ${detail} (hint: it is split into words as a shell does, ` +
        "without expansions; quote special characters)",
    );
  };
  const words: string[] = [];
  let word: string | null = null;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === " " || c === "\t" || c === "\n") {
      if (word !== null) words.push(word);
      word = null;
      i++;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) fail("unclosed single quote");
      word = (word ?? "") + text.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      let part = "";
      i++;
      for (;;) {
        if (i >= text.length) fail("unclosed double quote");
        const d = text[i];
        if (d === '"') break;
        if (d === "\\" && i + 1 < text.length && '"\\$`\n'.includes(text[i + 1])) {
          if (text[i + 1] !== "\n") part += text[i + 1];
          i += 2;
          continue;
        }
        if (d === "$" || d === "`") fail(`"${d}" inside double quotes would be expanded`);
        part += d;
        i++;
      }
      word = (word ?? "") + part;
      i++;
    } else if (c === "\\") {
      if (i + 1 >= text.length) fail("it ends with a backslash");
      if (text[i + 1] !== "\n") word = (word ?? "") + text[i + 1];
      i += 2;
    } else if (
      c === "~" && word === null && (i + 1 === text.length || "/ \t\n".includes(text[i + 1]))
    ) {
      word = Deno.env.get("HOME") || fail('"~" needs $HOME, which is not set');
      i++;
    } else if (SYNTAX.has(c) || c === "#" && word === null) {
      fail(`unquoted "${c}"`);
    } else {
      word = (word ?? "") + c;
      i++;
    }
  }
  if (word !== null) words.push(word);
  return words;
}
