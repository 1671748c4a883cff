/* The Chrome trace JSON sink (FORMATS.md): object form, metadata first, complete X
 * events, instants, counters, flows as s/f events. Every string is
 * escaped once, when its site or thread is first known; an event is then a few
 * memcpy's and hand-formatted integers. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "sinks.h"

struct tt_json_site {
	uint32_t name_at, name_len; /* "name":"...","cat":"ticktrace" */
	uint32_t src_at, src_len;   /* ,"args":{"src":"file:line" */
	uint32_t arg_at, arg_len;   /* "its argument's name": (0 long: "arg") */
};

struct tt_json {
	struct tt_sink sink;
	struct tt_out *out;
	const struct tt_trace *trace;
	struct tt_buf frags;          /* every fragment below, back to back */
	struct tt_json_site *sites;   /* by site id */
	uint32_t *thread_at;          /* by thread id: ,"pid":P,"tid":T, */
	uint32_t *thread_len;
	/* by file index: its process's pid here, the recorded one but where an earlier file
	 * has it (another machine's or boot's process): viewers join processes by pid */
	uint32_t *pid_of;
	struct tt_buf warnings;       /* escaped JSON strings, comma-separated */
	struct tt_buf scratch;
	bool source;                  /* "src":"file:line" on every slice and instant */
	struct tt_folded folded;      /* left out: nested deeper than Perfetto shows */
	uint64_t frame_tracks;        /* frame tracks named so far: those numbered below */
};

/* Integers above 2^53 lose digits in every JSON reader that uses doubles: those go
 * out as hexadecimal strings. */
#define TT_JSON_EXACT (UINT64_C(1) << 53)

/* A JSON string per RFC 8259, quotes included; bytes that are not UTF-8 become
 * U+FFFD, so the output is always valid JSON text. */
static void tt_json_escape(struct tt_buf *b, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	TT_BUF_LIT(b, "\"");
	for (size_t i = 0; i < n;) {
		unsigned c = s[i];
		if (c >= 0x80) {
			size_t len = tt_utf8_seq(s + i, n - i);
			if (len)
				tt_buf_add(b, s + i, len);
			else
				TT_BUF_LIT(b, "\xEF\xBF\xBD");
			i += len ? len : 1;
			continue;
		}
		i++;
		if (c == '"' || c == '\\') {
			char esc[2] = {'\\', (char)c};
			tt_buf_add(b, esc, 2);
		} else if (c < 0x20) {
			const char *named = c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" :
					    c == '\b' ? "\\b" : c == '\f' ? "\\f" : NULL;
			if (named) {
				tt_buf_add(b, named, 2);
			} else {
				char esc[6] = {'\\', 'u', '0', '0', "0123456789abcdef"[c >> 4],
					       "0123456789abcdef"[c & 15]};
				tt_buf_add(b, esc, 6);
			}
		} else {
			char ch = (char)c;
			tt_buf_add(b, &ch, 1);
		}
	}
	TT_BUF_LIT(b, "\"");
}

static void tt_json_escape_str(struct tt_buf *b, struct tt_str s)
{
	tt_json_escape(b, s.ptr, s.len);
}

static void tt_json_escape_c(struct tt_buf *b, const char *s)
{
	tt_json_escape(b, s, strlen(s));
}

/* A number, or a hexadecimal string where a double would round it. */
static void tt_json_u64(struct tt_out *o, uint64_t v)
{
	if (v < TT_JSON_EXACT) {
		tt_out_u64(o, v);
	} else {
		tt_out_char(o, '"');
		tt_out_hex(o, v);
		tt_out_char(o, '"');
	}
}

/* A signed value: a number while a double holds it exactly, else its decimal string. */
static void tt_json_i64(struct tt_out *o, int64_t v)
{
	bool exact = v < (int64_t)TT_JSON_EXACT && v > -(int64_t)TT_JSON_EXACT;
	if (!exact)
		tt_out_char(o, '"');
	tt_out_i64(o, v);
	if (!exact)
		tt_out_char(o, '"');
}

/* A fragment: a short one (nearly all are) as one block of fixed size, which the
 * compiler copies inline (a call to memcpy a fragment, three an event, cost more than
 * the copying), from the padding after the fragments into the slack the event
 * reserved; the bytes past the fragment are written over next. */
#define TT_JSON_FRAG_BLOCK 64
static inline void tt_json_frag(struct tt_json *j, uint32_t at, uint32_t len)
{
	struct tt_out *o = j->out;
	if (__builtin_expect(len <= TT_JSON_FRAG_BLOCK, 1))
		memcpy(o->buf + o->len, j->frags.p + at, TT_JSON_FRAG_BLOCK);
	else
		memcpy(o->buf + o->len, j->frags.p + at, len);
	o->len += len;
}
_Static_assert(TT_JSON_FRAG_BLOCK * 4 < TT_OUT_SLACK, "an event's fragments overrun its slack");

/* Starts an event: `,\n{"ph":"<ph>","ts":T`; the first event of the file is the
 * process_name metadata and so never comes here. `fixed` is the length of the
 * fragments the event will copy. */
static inline __attribute__((always_inline)) void tt_json_head(struct tt_json *j, const char *lit, size_t lit_len, size_t fixed,
			 int64_t ts)
{
	struct tt_out *o = j->out;
	tt_out_reserve(o, TT_OUT_SLACK + fixed);
	tt_out_lit(o, lit, lit_len);
	tt_out_us(o, ts);
}
#define TT_JSON_HEAD(j, lit, fixed, ts) tt_json_head((j), "" lit, sizeof("" lit) - 1, (fixed), (ts))

/* A duration such that a reader that adds "ts" and "dur" as doubles of microseconds,
 * as the DevTools engine does, gets exactly the double of the slice's end: one ulp
 * more, and a slice that begins where this one ends goes inside it; one less, and a
 * child that ends with it is dropped (1.5 % of the demo's slices, in the engine,
 * with three decimals only). The three decimals mostly do; else the fewest more
 * decimals that do, which differ from the duration by about an ulp of the end
 * (below 0.02 ns in a day-long trace), so a reader that rounds to nanoseconds, as
 * Perfetto does, still gets the duration. */
static __attribute__((noinline)) void tt_json_dur_places(struct tt_out *o, double start,
							  double end, int64_t dur)
{
	static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,
				       1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17};
	double want = end - start; /* exact when dur <= ts (Sterbenz) */
	/* Decimals in steps of about half an ulp of the end or finer, 2^(e-54) for an
	 * end in [2^(e-1), 2^e), where one of three neighbours parses into the doubles
	 * that give the end: places of about (54 - e) log10(2). */
	uint64_t bits;
	memcpy(&bits, &end, sizeof bits);
	int e = (int)(bits >> 52 & 0x7ff) - 1022;
	int from = (int)((54 - e) * 0.30103);
	for (int places = from > 4 ? from : 4; places < 18; places++) {
		double scaled = want * pow10[places];
		if (scaled >= 9007199254740991.0) /* 2^53 - 1: n and n + 1 must be exact */
			break;
		uint64_t nearest = (uint64_t)(scaled + 0.5);
		for (uint64_t n = nearest ? nearest - 1 : 0; n <= nearest + 1; n++) {
			/* What a reader parses from that decimal: one correctly rounded division. */
			if (start + (double)n / pow10[places] == end) {
				tt_out_decimal(o, n, (unsigned)places);
				return;
			}
		}
	}
	/* Seventeen significant digits parse back into `want` itself. */
	char text[32];
	int len = snprintf(text, sizeof text, "%.17g", want);
	if (start + want == end && len > 0 && len < (int)sizeof text)
		tt_out_lit(o, text, (size_t)len);
	else
		tt_out_us(o, dur); /* (a slice much longer than its start time: rare, and close) */
}

/* Inline, the three decimals' case: every slice's. */
static inline __attribute__((always_inline)) void tt_json_dur(struct tt_out *o, int64_t ts,
							      int64_t dur)
{
	double start = (double)ts / 1000, end = (double)(ts + dur) / 1000;
	if (ts < 0 || dur <= 0 || start + (double)dur / 1000 == end)
		tt_out_us(o, dur);
	else
		tt_json_dur_places(o, start, end, dur);
}

static inline __attribute__((always_inline)) void tt_json_thread(struct tt_json *j, const struct tt_thread *t)
{
	tt_json_frag(j, j->thread_at[t->id], j->thread_len[t->id]);
}

/* The length of what tt_json_tail copies: a site's fragments, or a function's name
 * or an event's own name, which is escaped into j->scratch here. */
static inline __attribute__((always_inline)) size_t tt_json_prepare(struct tt_json *j, const struct tt_event *e)
{
	if (tt_event_naming(e) != TT_NAMED_BY_SITE) {
		struct tt_str name = tt_event_name(e);
		j->scratch.len = 0;
		TT_BUF_LIT(&j->scratch, "\"name\":");
		tt_json_escape(&j->scratch, name.ptr, name.len);
		TT_BUF_LIT(&j->scratch, ",\"cat\":\"ticktrace\"");
		return j->scratch.oom ? 0 : j->scratch.len;
	}
	const struct tt_json_site *s = &j->sites[e->site->id];
	return s->name_len + (j->source ? s->src_len : 0) + s->arg_len;
}

/* Opens the args object, or continues it. */
static void tt_json_arg_key(struct tt_out *o, bool *open, const char *key, size_t len)
{
	if (*open) {
		tt_out_char(o, ',');
	} else {
		TT_OUT_LIT(o, ",\"args\":{");
		*open = true;
	}
	tt_out_lit(o, key, len);
}

/* A mark's argument (decode.h): its strings, of any length, escaped into scratch. */
static void tt_json_mark_arg(struct tt_json *j, bool *open, const struct tt_an_arg *a)
{
	struct tt_buf *b = &j->scratch;
	b->len = 0;
	tt_json_escape_c(b, a->key);
	TT_BUF_LIT(b, ":");
	if (a->text)
		tt_json_escape_c(b, a->text);
	if (b->oom)
		return;
	tt_out_reserve(j->out, 32);
	tt_json_arg_key(j->out, open, "", 0);
	tt_out_bytes(j->out, b->p, b->len);
	if (!a->text) {
		tt_out_reserve(j->out, 32);
		tt_json_i64(j->out, a->number);
	}
}

/* The flags that give a slice or an instant args of its own (TT_EV_NAMED: a mark's) */
#define TT_JSON_ARGS                                                                       \
	(TT_EV_GAP | TT_EV_ARG | TT_EV_NAMED | TT_EV_SCOPE_VALUE | TT_EV_DESCRIBED |         \
	 TT_EV_UNTERMINATED | TT_EV_UNBEGUN | TT_EV_CLIPPED_BEGIN | TT_EV_CLIPPED_END)

/* The args of a slice or instant that has any (TT_JSON_ARGS); *open: the args object
 * is open. */
static inline __attribute__((always_inline)) void tt_json_args(struct tt_json *j, const struct tt_event *e,
							       bool *open)
{
	struct tt_out *o = j->out;
	if (e->flags & TT_EV_GAP) {
		tt_json_arg_key(o, open, "\"dropped\":", 10);
		tt_json_u64(o, e->value);
	} else if (e->flags & TT_EV_ARG) {
		const struct tt_json_site *s = e->site ? &j->sites[e->site->id] : NULL;
		if (s && s->arg_len) {
			tt_json_arg_key(o, open, "", 0);
			tt_json_frag(j, s->arg_at, s->arg_len);
		} else {
			tt_json_arg_key(o, open, "\"arg\":", 6);
		}
		if (e->site && e->site->signed_arg)
			tt_json_i64(o, (int64_t)e->value);
		else
			tt_json_u64(o, e->value);
	}
	if (__builtin_expect(tt_event_naming(e) == TT_NAMED_BY_TEXT && e->args, 0)) {
		for (const struct tt_an_arg *a = e->args; a->key; a++)
			tt_json_mark_arg(j, open, a);
		tt_out_reserve(o, TT_OUT_SLACK); /* (the room reserved for the event may be spent) */
	}
	if (e->flags & TT_EV_SCOPE_VALUE) {
		tt_json_arg_key(o, open, "\"value\":", 8);
		tt_out_i64(o, e->scope_value);
	}
	if (e->flags & TT_EV_DESCRIBED) {
		tt_json_arg_key(o, open, "\"description\":", 14);
		j->scratch.len = 0;
		tt_json_escape(&j->scratch, e->text, e->text_len);
		if (!j->scratch.oom)
			tt_out_lit(o, j->scratch.p, j->scratch.len);
	}
	if (e->flags & TT_EV_UNTERMINATED)
		tt_json_arg_key(o, open, "\"unterminated\":true", 19);
	if (e->flags & TT_EV_UNBEGUN)
		tt_json_arg_key(o, open, "\"unbegun\":true", 14);
	if (e->flags & TT_EV_CLIPPED_BEGIN)
		tt_json_arg_key(o, open, "\"clipped_begin\":true", 20);
	if (e->flags & TT_EV_CLIPPED_END)
		tt_json_arg_key(o, open, "\"clipped_end\":true", 18);
}

/* Name, category and args of a slice or instant, then the closing braces. */
static inline __attribute__((always_inline)) void tt_json_tail(struct tt_json *j, const struct tt_event *e)
{
	struct tt_out *o = j->out;
	bool open = false; /* the args object is open */
	if (tt_event_naming(e) != TT_NAMED_BY_SITE) {
		if (!j->scratch.oom)
			tt_out_lit(o, j->scratch.p, j->scratch.len);
	} else {
		const struct tt_json_site *s = &j->sites[e->site->id];
		tt_json_frag(j, s->name_at, s->name_len);
		if (j->source && s->src_len) { /* a function without debug info has none */
			tt_json_frag(j, s->src_at, s->src_len);
			open = true;
		}
	}
	if (__builtin_expect(e->flags & TT_JSON_ARGS, 0)) /* (one test for nearly every event) */
		tt_json_args(j, e, &open);
	if (open)
		tt_out_char(o, '}');
	tt_out_char(o, '}');
}

static int tt_json_slice_end(struct tt_sink *sink, const struct tt_event *e)
{
	struct tt_json *j = (struct tt_json *)sink;
	struct tt_out *o = j->out;
	if (tt_too_deep(e, &j->folded.slices))
		return 0;
	/* a description escapes to at most six bytes a byte */
	size_t described = e->flags & TT_EV_DESCRIBED ? 6 * (size_t)e->text_len + 32 : 0;
	TT_JSON_HEAD(j, ",\n{\"ph\":\"X\",\"ts\":", tt_json_prepare(j, e) + described, e->ts);
	TT_OUT_LIT(o, ",\"dur\":");
	tt_json_dur(o, e->ts, e->dur);
	tt_json_thread(j, e->thread);
	tt_json_tail(j, e);
	return 0;
}

static int tt_json_instant(struct tt_sink *sink, const struct tt_event *e)
{
	struct tt_json *j = (struct tt_json *)sink;
	if (tt_too_deep(e, &j->folded.instants))
		return 0;
	TT_JSON_HEAD(j, ",\n{\"ph\":\"i\",\"s\":\"t\",\"ts\":", tt_json_prepare(j, e), e->ts);
	tt_json_thread(j, e->thread);
	tt_json_tail(j, e);
	return 0;
}

static int tt_json_counter(struct tt_sink *sink, const struct tt_event *e)
{
	struct tt_json *j = (struct tt_json *)sink;
	struct tt_out *o = j->out;
	const struct tt_json_site *s = &j->sites[e->site->id];
	TT_JSON_HEAD(j, ",\n{\"ph\":\"C\",\"ts\":", s->name_len, e->ts);
	tt_json_thread(j, e->thread);
	tt_json_frag(j, s->name_at, s->name_len);
	/* Counter args are the series and must all be numbers: no file and line here. */
	TT_OUT_LIT(o, ",\"args\":{\"value\":");
	tt_out_i64(o, (int64_t)e->value);
	TT_OUT_LIT(o, "}}");
	return 0;
}

/* One end of a flow: a zero-length slice at its point in time (args: the id recorded),
 * and the flow event ("s" out, "f" in) at the same time, thread and category, which is
 * how both the DevTools engine (by ts, pid, tid and cat) and Perfetto (the enclosing
 * slice) bind it. The DevTools engine pairs flow events in file order: the decoder
 * delivers FLOW_OUT before its FLOW_IN. The flow event's id is the decoder's link:
 * Perfetto binds ids over the whole trace and never lets one start twice. */
static int tt_json_flow(struct tt_sink *sink, const struct tt_event *e)
{
	struct tt_json *j = (struct tt_json *)sink;
	struct tt_out *o = j->out;
	bool out = e->flags & TT_EV_FLOW_OUT;
	if (tt_too_deep(e, &j->folded.flows))
		return 0;
	TT_JSON_HEAD(j, ",\n{\"ph\":\"X\",\"ts\":", 0, e->ts);
	TT_OUT_LIT(o, ",\"dur\":0.000");
	tt_json_thread(j, e->thread);
	struct tt_str name = tt_event_name(e);
	TT_OUT_LIT(o, "\"name\":\"");
	tt_out_lit(o, name.ptr, name.len);
	TT_OUT_LIT(o, "\",\"cat\":\"ticktrace\",\"args\":{\"id\":\"");
	tt_out_hex(o, e->value);
	if (out)
		TT_OUT_LIT(o, "\"}},\n{\"ph\":\"s\",\"id\":\"");
	else
		TT_OUT_LIT(o, "\"}},\n{\"ph\":\"f\",\"bp\":\"e\",\"id\":\"");
	tt_out_hex(o, e->link);
	TT_OUT_LIT(o, "\",\"ts\":");
	tt_out_us(o, e->ts);
	tt_json_thread(j, e->thread);
	TT_OUT_LIT(o, "\"name\":\"flow\",\"cat\":\"ticktrace\"}");
	return 0;
}

/* A frame boundary: the frame that ended, "NAME N" on its frames' thread, named at
 * its first frame. */
static int tt_json_frame(struct tt_sink *sink, const struct tt_event *e)
{
	struct tt_json *j = (struct tt_json *)sink;
	struct tt_out *o = j->out;
	if (e->value < 2)
		return 0;
	uint32_t pid = j->pid_of[e->thread->file->index], tid = TT_FRAMES_TID(e->func);
	j->scratch.len = 0;
	tt_json_escape_str(&j->scratch, e->site->name);
	if (j->scratch.oom)
		return tt_error("out of memory");
	tt_out_reserve(o, TT_OUT_SLACK + 2 * j->scratch.len);
	if (e->func >= j->frame_tracks) {
		j->frame_tracks = e->func + 1;
		TT_OUT_LIT(o, ",\n{\"name\":\"thread_name\",\"cat\":\"__metadata\",\"ph\":\"M\",\"ts\":0,\"pid\":");
		tt_out_u64(o, pid);
		TT_OUT_LIT(o, ",\"tid\":");
		tt_out_u64(o, tid);
		TT_OUT_LIT(o, ",\"args\":{\"name\":");
		tt_out_lit(o, j->scratch.p, j->scratch.len);
		TT_OUT_LIT(o, "}}");
	}
	TT_OUT_LIT(o, ",\n{\"ph\":\"X\",\"ts\":");
	tt_out_us(o, e->ts - e->dur);
	TT_OUT_LIT(o, ",\"dur\":");
	tt_json_dur(o, e->ts - e->dur, e->dur);
	TT_OUT_LIT(o, ",\"pid\":");
	tt_out_u64(o, pid);
	TT_OUT_LIT(o, ",\"tid\":");
	tt_out_u64(o, tid);
	/* the name with the number inside its quotes: "frame 12" */
	TT_OUT_LIT(o, ",\"name\":");
	tt_out_lit(o, j->scratch.p, j->scratch.len - 1);
	tt_out_char(o, ' ');
	tt_out_u64(o, e->value - 1);
	TT_OUT_LIT(o, "\",\"cat\":\"ticktrace\"}");
	return 0;
}

static void tt_json_warning(struct tt_sink *sink, const char *message)
{
	struct tt_json *j = (struct tt_json *)sink;
	if (j->warnings.len)
		TT_BUF_LIT(&j->warnings, ",");
	tt_json_escape_c(&j->warnings, message);
}

/* One metadata event: {"name":"<what>","cat":"__metadata","ph":"M","ts":0,"pid":P,
 * "tid":T,"args":{<args>}} */
static void tt_json_meta(struct tt_buf *b, const char *what, uint32_t pid, uint32_t tid,
			 const char *key)
{
	TT_BUF_LIT(b, "{\"name\":\"");
	tt_buf_add(b, what, strlen(what));
	TT_BUF_LIT(b, "\",\"cat\":\"__metadata\",\"ph\":\"M\",\"ts\":0,\"pid\":");
	tt_buf_u64(b, pid);
	TT_BUF_LIT(b, ",\"tid\":");
	tt_buf_u64(b, tid);
	TT_BUF_LIT(b, ",\"args\":{\"");
	tt_buf_add(b, key, strlen(key));
	TT_BUF_LIT(b, "\":");
}

static void tt_json_meta_sort(struct tt_buf *b, const char *what, uint32_t pid, uint32_t tid,
			      uint64_t index)
{
	TT_BUF_LIT(b, ",\n");
	tt_json_meta(b, what, pid, tid, "sort_index");
	tt_buf_u64(b, index);
	TT_BUF_LIT(b, "}}");
}

static void tt_json_metadata(struct tt_buf *b, const struct tt_trace *t, const uint32_t *pid_of)
{
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct tt_file *f = &t->files[i];
		uint32_t pid = pid_of[i];
		if (i)
			TT_BUF_LIT(b, ",\n");
		tt_json_meta(b, "process_name", pid, pid, "name");
		tt_json_escape_str(b, f->process.name);
		TT_BUF_LIT(b, "}}");
		tt_json_meta_sort(b, "process_sort_index", pid, pid, i);
		if (f->machine.host_name_len) {
			TT_BUF_LIT(b, ",\n");
			tt_json_meta(b, "process_labels", pid, pid, "labels");
			char label[TT_MACHINE_LABEL_MAX + 8] = "host ";
			size_t len = tt_machine_label(t, f->machine_index, (struct tt_str){f->machine.host_name,
						      f->machine.host_name_len}, label + 5, sizeof label - 5);
			tt_json_escape_str(b, (struct tt_str){label, (uint32_t)len + 5});
			TT_BUF_LIT(b, "}}");
		}
		for (size_t k = 0; k < f->nthreads; k++) {
			const struct tt_thread *th = &f->threads[k];
			if (th->name.len) {
				TT_BUF_LIT(b, ",\n");
				tt_json_meta(b, "thread_name", pid, th->tid, "name");
				tt_json_escape_str(b, th->name);
				TT_BUF_LIT(b, "}}");
			}
			tt_json_meta_sort(b, "thread_sort_index", pid, th->tid, th->index);
		}
	}
}

/* A thread's states (TT_SEC_SCHED) as slices "Running" (args: cpu), "Preempted" and
 * "Blocked" on a thread of their own beside it, "NAME (states)", each from a switch to
 * the next, as the file has them (the .pftrace's are those but for its synthetic
 * switches: perfetto_sched.c): Chrome's and
 * Perfetto's JSON import both show slices as a track whose words read at a glance,
 * where a counter track would be a step graph of numbers to decode. A span the file
 * lost the states of is left empty; the last state, which nothing ends, is not shown
 * (but a run that the thread's exit ends). */
/* The thread "NAME (states)" beside a thread, sorted with it. */
static int tt_json_states_track(struct tt_json *j, const struct tt_thread *th, uint32_t pid,
				uint32_t tid)
{
	struct tt_out *o = j->out;
	j->scratch.len = 0;
	tt_json_escape_str(&j->scratch, th->name);
	if (j->scratch.oom)
		return tt_error("out of memory");
	tt_out_reserve(o, TT_OUT_SLACK + 2 * j->scratch.len);
	TT_OUT_LIT(o, ",\n{\"name\":\"thread_name\",\"cat\":\"__metadata\",\"ph\":\"M\",\"ts\":0,\"pid\":");
	tt_out_u64(o, pid);
	TT_OUT_LIT(o, ",\"tid\":");
	tt_out_u64(o, tid);
	TT_OUT_LIT(o, ",\"args\":{\"name\":");
	/* "NAME (states)": the name with the words inside its quotes; "states" alone */
	if (th->name.len) {
		tt_out_lit(o, j->scratch.p, j->scratch.len - 1);
		TT_OUT_LIT(o, " (states)\"}}");
	} else {
		TT_OUT_LIT(o, "\"states\"}}");
	}
	TT_OUT_LIT(o, ",\n{\"name\":\"thread_sort_index\",\"cat\":\"__metadata\",\"ph\":\"M\",\"ts\":0,\"pid\":");
	tt_out_u64(o, pid);
	TT_OUT_LIT(o, ",\"tid\":");
	tt_out_u64(o, tid);
	TT_OUT_LIT(o, ",\"args\":{\"sort_index\":");
	tt_out_u64(o, th->index);
	TT_OUT_LIT(o, "}}");
	return 0;
}

static int tt_json_states(struct tt_json *j, const struct tt_trace *t, const struct tt_thread *th)
{
	static const char *const names[] = {"Running", "Preempted", "Blocked"};
	struct tt_out *o = j->out;
	uint32_t pid = j->pid_of[th->file->index], tid = TT_STATES_TID(th->tid);
	bool named = false; /* the track, from its first slice */
	for (size_t i = 0; i < th->nstates; i++) {
		const struct tt_sched_state *st = &th->states[i];
		uint32_t cpu = tt_state_cpu(th, i);
		/* what no switch says (tt_state_cpu), as in the .pftrace: not shown; nor the
		 * last state, but a run its thread's exit ends */
		bool exits = tt_state_exits(th, i);
		if (!exits && !tt_state_shown(th, i))
			continue;
		if (!named && tt_json_states_track(j, th, pid, tid) < 0)
			return -1;
		named = true;
		int64_t end = exits ? th->exited_ns : th->states[i + 1].ns;
		int64_t ts = st->ns - t->base_ns, dur = end - st->ns;
		tt_out_reserve(o, TT_OUT_SLACK);
		TT_OUT_LIT(o, ",\n{\"ph\":\"X\",\"ts\":");
		tt_out_us(o, ts);
		TT_OUT_LIT(o, ",\"dur\":");
		tt_json_dur(o, ts, dur);
		TT_OUT_LIT(o, ",\"pid\":");
		tt_out_u64(o, pid);
		TT_OUT_LIT(o, ",\"tid\":");
		tt_out_u64(o, tid);
		TT_OUT_LIT(o, ",\"name\":\"");
		tt_out_lit(o, names[st->what], strlen(names[st->what]));
		TT_OUT_LIT(o, "\",\"cat\":\"sched\"");
		if (st->what == TT_SCHED_RUNNING) {
			TT_OUT_LIT(o, ",\"args\":{\"cpu\":");
			tt_out_u64(o, cpu);
			tt_out_char(o, '}');
		}
		tt_out_char(o, '}');
	}
	return 0;
}

static int tt_json_all_states(struct tt_json *j, const struct tt_trace *t)
{
	for (size_t i = 0; i < t->nfiles; i++)
		for (size_t k = 0; k < t->files[i].nthreads; k++) {
			const struct tt_thread *th = &t->files[i].threads[k];
			if ((th->flags & TT_THREAD_SCHED) && tt_json_states(j, t, th) < 0)
				return -1;
		}
	return 0;
}

/* Whether two files of one machine ran at the same time: then two processes, however
 * their pids (PID namespaces: several pid 1), as a pid is one process at a time. An end
 * not written (a killed run's) is open. */
static bool tt_json_at_once(const struct tt_file *a, const struct tt_file *b)
{
	int64_t a_end = a->header.end.monotonic_ns, b_end = b->header.end.monotonic_ns;
	return (a_end < a->header.start.monotonic_ns || b->header.start.monotonic_ns <= a_end) &&
	       (b_end < b->header.start.monotonic_ns || a->header.start.monotonic_ns <= b_end);
}

void tt_json_pids(const struct tt_trace *t, uint32_t *pid_of)
{
	uint32_t spare = 0; /* past every recorded pid: the pids given where two collide */
	for (size_t i = 0; i < t->nfiles; i++)
		if (t->files[i].process.pid >= spare)
			spare = t->files[i].process.pid + 1;
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct tt_file *f = &t->files[i];
		size_t k = 0; /* an earlier file of its process (its pid on its machine, before
			       * or after it: an exec)? */
		while (k < i && !(t->files[k].process.pid == f->process.pid &&
				  t->files[k].machine_index == f->machine_index &&
				  !tt_json_at_once(&t->files[k], f)))
			k++;
		if (k < i) {
			pid_of[i] = pid_of[k];
			continue;
		}
		pid_of[i] = f->process.pid;
		for (k = 0; k < i && pid_of[i] == f->process.pid; k++)
			if (pid_of[k] == f->process.pid)
				pid_of[i] = spare++;
	}
}

/* Escapes every site's and thread's strings once, into fragments. */
static int tt_json_start(struct tt_sink *sink, const struct tt_trace *t)
{
	struct tt_json *j = (struct tt_json *)sink;
	j->trace = t;
	j->sites = calloc(t->nsites ? t->nsites : 1, sizeof(*j->sites));
	j->thread_at = calloc(t->nthreads ? t->nthreads : 1, sizeof(*j->thread_at));
	j->thread_len = calloc(t->nthreads ? t->nthreads : 1, sizeof(*j->thread_len));
	j->pid_of = calloc(t->nfiles ? t->nfiles : 1, sizeof(*j->pid_of));
	if (!j->sites || !j->thread_at || !j->thread_len || !j->pid_of)
		return tt_error("out of memory for %zu sites and %zu threads", t->nsites, t->nthreads);
	tt_json_pids(t, j->pid_of);
	struct tt_buf *b = &j->frags;
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct tt_file *f = &t->files[i];
		for (size_t k = 0; k < f->nsites; k++) {
			const struct tt_site *s = &f->sites[k];
			struct tt_json_site *js = &j->sites[s->id];
			js->name_at = (uint32_t)b->len;
			TT_BUF_LIT(b, "\"name\":");
			tt_json_escape_str(b, s->name);
			TT_BUF_LIT(b, ",\"cat\":\"ticktrace\"");
			js->name_len = (uint32_t)(b->len - js->name_at);
			js->src_at = (uint32_t)b->len;
			if (s->file.len) { /* a function without debug info has none */
				/* One "file:line" string: a third of an event's bytes, so the shorter form */
				TT_BUF_LIT(b, ",\"args\":{\"src\":");
				tt_json_escape_str(b, s->file);
				b->len--; /* reopen the string after the file name */
				TT_BUF_LIT(b, ":");
				tt_buf_u64(b, s->line);
				TT_BUF_LIT(b, "\"");
			}
			js->src_len = (uint32_t)(b->len - js->src_at);
			js->arg_at = (uint32_t)b->len;
			if (s->arg_name.len) {
				tt_json_escape_str(b, s->arg_name);
				TT_BUF_LIT(b, ":");
			}
			js->arg_len = (uint32_t)(b->len - js->arg_at);
		}
		for (size_t k = 0; k < f->nthreads; k++) {
			const struct tt_thread *th = &f->threads[k];
			j->thread_at[th->id] = (uint32_t)b->len;
			TT_BUF_LIT(b, ",\"pid\":");
			tt_buf_u64(b, j->pid_of[i]);
			TT_BUF_LIT(b, ",\"tid\":");
			tt_buf_u64(b, th->tid);
			TT_BUF_LIT(b, ",");
			j->thread_len[th->id] = (uint32_t)(b->len - j->thread_at[th->id]);
		}
		if (b->len > UINT32_MAX / 2)
			return tt_error("too many call sites and threads for the JSON writer");
	}
	/* the padding a fragment's block may read past the last */
	char *pad = tt_buf_room(b, TT_JSON_FRAG_BLOCK);
	if (pad)
		memset(pad, 0, TT_JSON_FRAG_BLOCK);
	struct tt_buf meta = {0};
	TT_BUF_LIT(&meta, "{\"traceEvents\":[\n");
	tt_json_metadata(&meta, t, j->pid_of);
	if (b->oom || meta.oom) {
		tt_buf_free(&meta);
		return tt_error("out of memory");
	}
	tt_out_bytes(j->out, meta.p, meta.len);
	tt_buf_free(&meta);
	return t->states_at_finish ? 0 : tt_json_all_states(j, t);
}

static void tt_buf_i64(struct tt_buf *b, int64_t v)
{
	if (v < 0)
		TT_BUF_LIT(b, "-");
	tt_buf_u64(b, v < 0 ? -(uint64_t)v : (uint64_t)v);
}

static void tt_buf_hex(struct tt_buf *b, const uint8_t *bytes, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		char two[2] = {digits[bytes[i] >> 4], digits[bytes[i] & 15]};
		tt_buf_add(b, two, 2);
	}
}

/* The machines the files were recorded on, their clocks' errors and the offsets
 * that placed them (tt_machine): otherData's "machines". */
static bool tt_same_host(const struct tt_machine_info *a, const struct tt_machine_info *b)
{
	return a->host_name_len == b->host_name_len && !memcmp(a->host_name, b->host_name, a->host_name_len);
}

/* The other names of machine k's host, each once: its files recorded where `unshare
 * --uts` or a container renamed it ("also_named"; none, the usual case: no key). */
static void tt_json_also_named(struct tt_buf *b, const struct tt_trace *t, size_t k)
{
	const struct tt_machine_info *first = &t->machines[k].file->machine;
	size_t n = 0;
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct tt_machine_info *m = &t->files[i].machine;
		size_t seen = 0;
		while (seen < i && !(t->files[seen].machine_index == k && tt_same_host(&t->files[seen].machine, m)))
			seen++;
		if (t->files[i].machine_index != k || tt_same_host(m, first) || seen < i)
			continue;
		if (n++)
			TT_BUF_LIT(b, ",");
		else
			TT_BUF_LIT(b, ",\"also_named\":[");
		tt_json_escape_str(b, (struct tt_str){m->host_name, m->host_name_len});
	}
	if (n)
		TT_BUF_LIT(b, "]");
}

static void tt_json_machines(struct tt_buf *b, const struct tt_trace *t, const uint32_t *pid_of)
{
	TT_BUF_LIT(b, ",\"machines\":[");
	for (size_t k = 0; k < t->nmachines; k++) {
		const struct tt_machine *mc = &t->machines[k];
		const struct tt_machine_info *m = &mc->file->machine;
		if (k)
			TT_BUF_LIT(b, ",");
		TT_BUF_LIT(b, "{\"host\":");
		tt_json_escape_str(b, (struct tt_str){m->host_name, m->host_name_len});
		tt_json_also_named(b, t, k);
		TT_BUF_LIT(b, ",\"boot_id\":\"");
		tt_buf_hex(b, m->boot_id, sizeof m->boot_id);
		TT_BUF_LIT(b, "\",\"machine_id\":\"");
		tt_buf_hex(b, m->machine_id, sizeof m->machine_id);
		TT_BUF_LIT(b, "\",\"placed_by\":\"");
		tt_buf_add(b, mc->clock, strlen(mc->clock));
		TT_BUF_LIT(b, "\",\"offset_ns\":");
		tt_buf_i64(b, mc->offset_ns);
		TT_BUF_LIT(b, ",\"given_offset_ns\":");
		tt_buf_i64(b, mc->given_ns);
		TT_BUF_LIT(b, ",\"uncertainty_ns\":");
		if (mc->uncertainty_ns < 0)
			TT_BUF_LIT(b, "null");
		else
			tt_buf_i64(b, mc->uncertainty_ns);
		if (mc->flows_window) { /* --align flows */
			TT_BUF_LIT(b, ",\"flows_offset_ns\":");
			tt_buf_i64(b, mc->flows_ns);
			TT_BUF_LIT(b, ",\"flows_window_ns\":[");
			tt_buf_i64(b, mc->flows_lo_ns);
			TT_BUF_LIT(b, ",");
			tt_buf_i64(b, mc->flows_hi_ns);
			TT_BUF_LIT(b, "],\"flows_with\":");
			tt_buf_u64(b, mc->flows_with); /* (the machine its flows place it against) */
		}
		TT_BUF_LIT(b, ",\"time_namespace_ns\":");
		tt_buf_i64(b, m->timens_monotonic_ns);
		if (m->flags & TT_MACHINE_START_CLOCK && m->start.state >= 0) {
			TT_BUF_LIT(b, ",\"esterror_ns\":");
			tt_buf_i64(b, m->start.esterror_ns);
			TT_BUF_LIT(b, ",\"maxerror_ns\":");
			tt_buf_i64(b, m->start.maxerror_ns);
		}
		if (mc->wall_step_ns) { /* (stepped during its run: placed by the start's reading) */
			TT_BUF_LIT(b, ",\"wall_clock_step_ns\":");
			tt_buf_i64(b, mc->wall_step_ns);
		}
		if (mc->runs_disagree_ns) { /* (stepped between its runs: placed by the earliest's) */
			TT_BUF_LIT(b, ",\"runs_wall_clock_step_ns\":");
			tt_buf_i64(b, mc->runs_disagree_ns);
		}
		if (mc->unsynchronized)
			TT_BUF_LIT(b, ",\"unsynchronized\":true,\"pids\":[");
		else
			TT_BUF_LIT(b, ",\"unsynchronized\":false,\"pids\":[");
		for (size_t i = 0, n = 0; i < t->nfiles; i++)
			if (t->files[i].machine_index == k) {
				if (n++)
					TT_BUF_LIT(b, ",");
				tt_buf_u64(b, pid_of[i]);
			}
		TT_BUF_LIT(b, "]}");
	}
	TT_BUF_LIT(b, "]");
}

static int tt_json_finish(struct tt_sink *sink, const struct tt_summary *sum)
{
	struct tt_json *j = (struct tt_json *)sink;
	const struct tt_trace *t = j->trace;
	if (t->states_at_finish && tt_json_all_states(j, t) < 0)
		return -1;
	char folded[256];
	if (tt_folded_message(&j->folded, folded, sizeof(folded))) {
		tt_warn("%s", folded);
		tt_json_warning(sink, folded);
	}
	struct tt_buf b = {0};
	TT_BUF_LIT(&b, "\n],\n\"otherData\":{\"producer\":\"ticktrace\","
		   "\"clock\":\"CLOCK_MONOTONIC\",\"start_monotonic_ns\":");
	/* (negative where a machine is placed before the first's boot: ts 0 is then before it) */
	tt_buf_i64(&b, t->base_ns);
	tt_json_machines(&b, t, j->pid_of);
	TT_BUF_LIT(&b, ",\"files\":[");
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct tt_file *f = &t->files[i];
		if (i)
			TT_BUF_LIT(&b, ",");
		TT_BUF_LIT(&b, "{\"path\":");
		tt_json_escape_c(&b, f->path);
		TT_BUF_LIT(&b, ",\"pid\":");
		tt_buf_u64(&b, j->pid_of[i]);
		if (j->pid_of[i] != f->process.pid) { /* another file's process had its pid */
			TT_BUF_LIT(&b, ",\"recorded_pid\":");
			tt_buf_u64(&b, f->process.pid);
		}
		TT_BUF_LIT(&b, ",\"tsc_hz\":");
		tt_buf_u64(&b, f->header.tsc_hz);
		TT_BUF_LIT(&b, ",\"tsc_source\":\"anchors\",\"invariant_tsc\":");
		if (f->header.flags & TT_FILE_INVARIANT_TSC)
			TT_BUF_LIT(&b, "true}");
		else
			TT_BUF_LIT(&b, "false}");
	}
	const struct {
		const char *key;
		uint64_t v;
	} counts[] = {
		{",\"events\":", sum->events},       {",\"threads\":", sum->threads},
		{",\"dropped\":", sum->dropped},     {",\"unmatched\":", sum->unmatched},
		{",\"clamped\":", sum->clamped},     {",\"unterminated\":", sum->unterminated},
		{",\"unbegun\":", sum->unbegun},     {",\"gaps\":", sum->gaps},
	};
	TT_BUF_LIT(&b, "]");
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		tt_buf_add(&b, counts[i].key, strlen(counts[i].key));
		tt_buf_u64(&b, counts[i].v);
	}
	TT_BUF_LIT(&b, ",\"warnings\":[");
	if (j->warnings.len)
		tt_buf_add(&b, j->warnings.p, j->warnings.len);
	TT_BUF_LIT(&b, "]}}\n");
	int rc = 0;
	if (b.oom || j->warnings.oom || j->scratch.oom)
		rc = tt_error("out of memory");
	else
		tt_out_bytes(j->out, b.p, b.len);
	tt_buf_free(&b);
	return rc;
}

static void tt_json_destroy(struct tt_sink *sink)
{
	struct tt_json *j = (struct tt_json *)sink;
	tt_buf_free(&j->frags);
	tt_buf_free(&j->warnings);
	tt_buf_free(&j->scratch);
	free(j->sites);
	free(j->thread_at);
	free(j->pid_of);
	free(j->thread_len);
	free(j);
}

static const struct tt_sink_ops tt_json_ops = {
	.start = tt_json_start,
	.slice_end = tt_json_slice_end,
	.instant = tt_json_instant,
	.counter = tt_json_counter,
	.flow = tt_json_flow,
	.frame = tt_json_frame,
	.warning = tt_json_warning,
	.finish = tt_json_finish,
	.destroy = tt_json_destroy,
};

struct tt_sink *tt_json_sink_new(struct tt_out *out, bool source)
{
	struct tt_json *j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	j->sink.ops = &tt_json_ops;
	j->out = out;
	j->source = source;
	return &j->sink;
}
