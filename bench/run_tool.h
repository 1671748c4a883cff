/* The demos run the ticktrace command on what they recorded. */
#ifndef TT_RUN_TOOL_H
#define TT_RUN_TOOL_H

#ifdef __cplusplus
extern "C" {
#endif

/* Runs `tool` with the NULL-terminated `argv` (argv[0] included) in a child, its
 * output on ours, with recording off in this process and the dump at exit sent to
 * /dev/null (the raw file is written already: a later dump would rewrite it with a
 * later end anchor, and it would no longer match what was converted from it).
 * 0 when it exited with status 0, else -1 after saying so. */
int tt_run_tool(const char *tool, char *const argv[]);

#ifdef __cplusplus
}
#endif

#endif
