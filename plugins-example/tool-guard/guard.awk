# tool-guard: judges shell commands before an agent runs them. It blocks what destroys what
# cannot be rebuilt (a recursive rm of /, of a home dir or of a top-level system dir; formatting or
# overwriting a disk), asks a person about a force push (Claude Code and Cursor show their
# permission prompt; elsewhere it blocks, saying it needs approval), turns a lone `git clean -f`
# into a dry run that only lists what it would delete (rewriting the tool input and telling the
# model why), and allows everything else. The command is split into words as a shell splits it,
# so `rm -rf /tmp/build` passes, and only shell tools are judged, so a file whose text merely
# mentions `git push --force` is written. It is an example, not a sandbox: a command string handed
# to another shell (`bash -c "..."`, `eval`) or built at run time is not looked into.
#
# Request: {"id","hook","tool","args":{"command":...},...}, one a line. Answer, one a line:
# {"id","action":"allow"|"block"|"ask","reason","args"?,"context"?}, echoing the request's "id"
# (the daemon matches answers to requests by it; a one-shot run ignores it).

BEGIN {
  SHELL_TOOLS = "^(bash|sh|shell|zsh|exec|terminal|run_shell_command|run_terminal_cmd|Bash|Shell)$"
  PRECIOUS = "^(/|~|~[A-Za-z0-9._-]*|[$]HOME|[$][{]HOME[}]|/(home|Users)/[^/]+|" \
    "/(bin|boot|dev|etc|home|lib|lib32|lib64|opt|proc|root|sbin|srv|sys|usr|var|" \
    "Users|System|Library|Applications))/?[*]?$"
}

NF == 0 { next }

{
  ID = ""; HAVE_ID = 0; TOOL = ""; CMD = ""; HAVE_CMD = 0; BAD = 0; ASK = ""; CLEAN = 0
  CMD_AT = 0; ARGS_AT = 0
  L = $0; P = 1
  value(0, "")
  ws()
  if (BAD || P <= length(L)) {
    answer("block", "tool-guard could not read the request (not JSON)")
  } else if (TOOL !~ SHELL_TOOLS || !HAVE_CMD) {
    answer("allow", "")
  } else {
    why = judge(CMD)
    if (why != "") answer("block", "destructive shell command: " why)
    else if (ASK != "") {
      answer("ask", ASK, "", "tool-guard: prefer git push --force-with-lease, which refuses " \
        "to overwrite commits you have not seen")
    } else if (CLEAN && CMD_AT && CMD ~ /^[ \t]*git[ \t]+clean([ \t]+[-A-Za-z0-9._\/=]+)*[ \t]*$/) {
      # A lone git clean: the same command as a dry run, the other args kept as they came.
      new = CMD; sub(/clean/, "clean --dry-run", new)
      answer("allow", "", substr(L, ARGS_AT, CMD_AT - ARGS_AT) "\"" jesc(new) "\"" \
        substr(L, CMD_END, ARGS_END - CMD_END), "tool-guard: git clean ran as a dry run " \
        "(--dry-run) and only listed what it would delete; ask the user before deleting " \
        "untracked files")
    } else if (CLEAN) answer("ask", "git clean -f deletes untracked files for good")
    else answer("allow", "")
  }
}

# args: the JSON text of the input to run instead; context: text for the model.
function answer(action, reason, args, context) {
  if (HAVE_ID) printf "{\"id\":\"%s\",", jesc(ID)
  else printf "{"
  printf "\"action\":\"%s\",\"reason\":\"%s\"", action, jesc(reason)
  if (args != "") printf ",\"args\":%s", args
  if (context != "") printf ",\"context\":\"%s\"", jesc(context)
  printf "}\n"
  fflush()
}

# --- a small JSON reader: remembers "id" and "tool" at the top and the command inside "args" ---

function ws() { while (P <= length(L) && substr(L, P, 1) ~ /[ \t\r]/) P++ }

function value(depth, key,    c, s, start) {
  ws()
  c = substr(L, P, 1)
  if (c == "{") return object(depth + 1, key)
  if (c == "[") return array(depth + 1)
  if (c == "\"") {
    start = P
    s = string()
    if (depth == 1 && key == "id") { ID = s; HAVE_ID = 1 }
    if (depth == 1 && key == "tool") TOOL = s
    if (depth == 1 && key == "args") { CMD = s; HAVE_CMD = 1 }
    if (depth == 2 && ARGS && !HAVE_CMD && (key == "command" || key == "cmd" || key == "script")) {
      CMD = s; HAVE_CMD = 1; CMD_AT = start; CMD_END = P
    }
    return
  }
  if (match(substr(L, P), /^(-?[0-9][0-9.eE+-]*|true|false|null)/)) { P += RLENGTH; return }
  BAD = 1
}

function object(depth, parent,    k, was) {
  was = ARGS
  ARGS = (depth == 2 && parent == "args")
  # Where the args object starts and ends, to answer it back with only the command rewritten.
  if (ARGS) ARGS_AT = P
  P++; ws()
  if (substr(L, P, 1) == "}") { P++; ARGS = was; return }
  while (!BAD) {
    ws()
    if (substr(L, P, 1) != "\"") { BAD = 1; break }
    k = string(); ws()
    if (substr(L, P, 1) != ":") { BAD = 1; break }
    P++
    value(depth, k)
    ws()
    if (substr(L, P, 1) == ",") { P++; continue }
    if (substr(L, P, 1) == "}") { P++; break }
    BAD = 1
  }
  if (ARGS) ARGS_END = P
  ARGS = was
}

function array(depth) {
  P++; ws()
  if (substr(L, P, 1) == "]") { P++; return }
  while (!BAD) {
    value(depth, "")
    ws()
    if (substr(L, P, 1) == ",") { P++; continue }
    if (substr(L, P, 1) == "]") { P++; break }
    BAD = 1
  }
}

function string(    out, c, e, n) {
  out = ""; P++
  while (P <= length(L)) {
    c = substr(L, P, 1)
    if (c == "\"") { P++; return out }
    if (c == "\\") {
      e = substr(L, P + 1, 1); P += 2
      if (e == "n") out = out "\n"
      else if (e == "t") out = out "\t"
      else if (e == "r") out = out "\r"
      else if (e == "b" || e == "f") out = out " "
      else if (e == "u") {
        n = hex(substr(L, P, 4)); P += 4
        out = out (n > 31 && n < 127 ? sprintf("%c", n) : (n == 10 ? "\n" : "?"))
      } else out = out e
      continue
    }
    out = out c; P++
  }
  BAD = 1
  return out
}

function hex(s,    i, n) {
  n = 0
  for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", tolower(substr(s, i, 1))) - 1
  return n
}

function jesc(s) {
  gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); gsub(/\t/, "\\t", s); gsub(/\n/, "\\n", s)
  gsub(/[\001-\037]/, "?", s)
  return s
}

# --- the rules ---

# Splits a command line into simple commands (at ; & | newlines and parentheses), each into words
# with quotes removed, and returns why the first destructive one is, or "".
function judge(line,    i, c, q, word, inword, n, why) {
  n = 0; word = ""; inword = 0; q = ""
  for (i = 1; i <= length(line); i++) {
    c = substr(line, i, 1)
    if (q != "") {
      if (c == q) q = ""
      else if (c == "\\" && q == "\"" && i < length(line)) word = word substr(line, ++i, 1)
      else word = word c
    } else if (c == "'" || c == "\"") { q = c; inword = 1 }
    else if (c == "\\" && i < length(line)) { word = word substr(line, ++i, 1); inword = 1 }
    else if (c == " " || c == "\t") { if (inword) { W[++n] = word; word = ""; inword = 0 } }
    else if (index(";&|\n()", c)) {
      if (inword) { W[++n] = word; word = ""; inword = 0 }
      why = destructive(n); n = 0
      if (why != "") return why
    } else { word = word c; inword = 1 }
  }
  if (inword) W[++n] = word
  return destructive(n)
}

# Why the command in W[1..n] is destructive, or "".
function destructive(n,    i, j, prog, opt, recursive, target, force) {
  i = 1
  # Skip what only wraps the command: sudo/doas and their options (-u USER takes a value, so
  # "sudo -u root rm -rf /usr" is judged as "rm -rf /usr"), env, nice -n N, VAR=value, ...
  while (i <= n) {
    if (W[i] ~ /^(sudo|doas|env|nohup|time|command|exec|nice)$/) {
      opt = W[i]; i++
      while (i <= n && W[i] ~ /^-/) {
        if ((opt ~ /^(sudo|doas)$/ && W[i] ~ /^-[ugCDhprtTU]$/) || (opt == "nice" && W[i] == "-n")) i++
        i++
      }
    } else if (W[i] ~ /^[A-Za-z_][A-Za-z0-9_]*=/) i++
    else break
  }
  if (i > n) return ""
  prog = W[i]; sub(/.*\//, "", prog)
  if (prog == "rm") {
    recursive = 0; target = ""
    for (j = i + 1; j <= n; j++) {
      if (W[j] == "--no-preserve-root") return "rm --no-preserve-root"
      if (W[j] == "--recursive" || W[j] ~ /^-[a-zA-Z]*[rR]/) recursive = 1
      else if (W[j] !~ /^-/ && target == "" && W[j] ~ PRECIOUS) target = W[j]
    }
    return recursive && target != "" ? "recursive rm of " target : ""
  }
  if (prog == "git") {
    for (j = i + 1; j <= n && W[j] != "push" && W[j] != "clean"; j++) ;
    if (W[j] == "clean") {
      for (force = 0; j <= n; j++) {
        if (W[j] == "-n" || W[j] == "--dry-run" || W[j] ~ /^-[a-zA-Z]*n/) return ""
        if (W[j] == "--force" || W[j] ~ /^-[a-zA-Z]*f/) force = 1
      }
      CLEAN += force
      return ""
    }
    for (j++; j <= n; j++) {
      if (W[j] == "--force" || W[j] ~ /^-[a-zA-Z]*f[a-zA-Z]*$/ || W[j] ~ /^[+][^+-]/) {
        # A person decides (a force push may be meant); told why, and the safer way.
        if (ASK == "") ASK = "git push " W[j] " overwrites the remote's history"
        return ""
      }
    }
    return ""
  }
  if (prog ~ /^mkfs([.].+)?$/) return prog " formats a disk"
  if (prog == "dd") {
    for (j = i + 1; j <= n; j++) {
      if (W[j] ~ /^of=\/dev\/(sd|hd|vd|xvd|nvme|disk|mmcblk)/) return "dd " W[j] " overwrites a disk"
    }
  }
  return ""
}
