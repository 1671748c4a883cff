/* The flame graph sink (`ticktrace flame`): where the time went, with no browser: folded
 * stacks ("thread;outer;inner SELF_NS" a line, what flamegraph.pl, inferno and
 * speedscope read) or an SVG drawn here. Each slice's self time (its duration less
 * its children's) is added to the path of scopes and functions that leads to it,
 * under its thread's name; threads that share a name share a root.
 *
 * The paths form a tree of nodes (parent, name) -> child, kept in a map: memory grows
 * with the distinct paths, never with events. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sinks.h"

struct tt_flame_node {
	uint32_t name;
	uint32_t first_child, next_sibling; /* 0: none (node 0 is the root, nobody's child) */
	uint64_t self, total;
};

struct tt_flame_thread {
	uint32_t root;     /* the node of its name */
	uint32_t *node;    /* by depth: the open slice's node */
	int64_t *children; /* by depth: time in its closed children */
	uint32_t cap;
};

struct tt_flame {
	struct tt_sink sink;
	const struct tt_trace *trace;
	struct tt_flame_node *nodes;
	size_t nnodes, nodes_cap;
	struct tt_map children;  /* parent << 32 | name -> node */
	char **names;            /* by name id */
	size_t nnames, names_cap;
	struct tt_map name_ids;  /* hash of a name (probed) -> name id */
	uint32_t *site_names;    /* by site id: name id + 1, 0 until known */
	struct tt_map func_names; /* function address -> name id, functions no site names */
	struct tt_flame_thread *threads;
	size_t nthreads;
};

static uint64_t tt_flame_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325u; /* FNV-1a */
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3u;
	return h;
}

/* The id of a name (n bytes, not NUL-terminated), or UINT32_MAX when out of memory.
 * A frame name holds no ';' (the folded format's separator) nor control bytes. */
static uint32_t tt_flame_name(struct tt_flame *fl, const char *s, size_t n)
{
	uint64_t h = tt_flame_hash(s, n);
	uint32_t id;
	for (;; h++) { /* a collision probes the next hash */
		if (!tt_map_get(&fl->name_ids, h, &id))
			break;
		if (strlen(fl->names[id]) == n && memcmp(fl->names[id], s, n) == 0)
			return id;
	}
	char *copy = malloc(n + 1);
	if (!copy || tt_reserve(&fl->names, &fl->names_cap, fl->nnames, sizeof(*fl->names)) < 0 ||
	    tt_map_put(&fl->name_ids, h, (uint32_t)fl->nnames) < 0) {
		free(copy);
		return UINT32_MAX;
	}
	for (size_t i = 0; i < n; i++)
		copy[i] = s[i] == ';' ? ':' : (unsigned char)s[i] < 0x20 ? '?' : s[i];
	copy[n] = 0;
	fl->names[fl->nnames] = copy;
	return (uint32_t)fl->nnames++;
}

/* The child of `parent` named `name`, made if new; UINT32_MAX when out of memory. */
static uint32_t tt_flame_child(struct tt_flame *fl, uint32_t parent, uint32_t name)
{
	uint64_t key = (uint64_t)parent << 32 | name;
	uint32_t id;
	if (tt_map_get(&fl->children, key, &id))
		return id;
	id = (uint32_t)fl->nnodes;
	if (tt_reserve(&fl->nodes, &fl->nodes_cap, fl->nnodes, sizeof(*fl->nodes)) < 0 ||
	    tt_map_put(&fl->children, key, id) < 0)
		return UINT32_MAX;
	fl->nodes[fl->nnodes++] = (struct tt_flame_node){
		.name = name, .next_sibling = fl->nodes[parent].first_child};
	fl->nodes[parent].first_child = id;
	return id;
}

static int tt_flame_start(struct tt_sink *s, const struct tt_trace *t)
{
	struct tt_flame *fl = (struct tt_flame *)s;
	fl->trace = t;
	fl->threads = calloc(t->nthreads ? t->nthreads : 1, sizeof(*fl->threads));
	fl->site_names = calloc(t->nsites ? t->nsites : 1, sizeof(*fl->site_names));
	fl->nthreads = t->nthreads;
	uint32_t all = tt_flame_name(fl, "all", 3);
	if (!fl->threads || !fl->site_names || all == UINT32_MAX)
		return tt_error("out of memory");
	fl->nodes = calloc(1024, sizeof(*fl->nodes));
	if (!fl->nodes)
		return tt_error("out of memory");
	fl->nodes_cap = 1024;
	fl->nodes[fl->nnodes++] = (struct tt_flame_node){.name = all};
	for (size_t i = 0; i < t->nfiles; i++)
		for (size_t k = 0; k < t->files[i].nthreads; k++) {
			const struct tt_thread *th = &t->files[i].threads[k];
			uint32_t name = tt_flame_name(fl, th->name.ptr, th->name.len);
			uint32_t root = name == UINT32_MAX ? name : tt_flame_child(fl, 0, name);
			if (root == UINT32_MAX)
				return tt_error("out of memory");
			fl->threads[th->id].root = root;
		}
	return 0;
}

/* The frame name of a slice: its site's name, or its function's. */
static uint32_t tt_flame_event_name(struct tt_flame *fl, const struct tt_event *e)
{
	uint32_t id;
	if (tt_event_naming(e) == TT_NAMED_BY_SITE) {
		if (fl->site_names[e->site->id])
			return fl->site_names[e->site->id] - 1;
		id = tt_flame_name(fl, e->site->name.ptr, e->site->name.len);
		if (id != UINT32_MAX)
			fl->site_names[e->site->id] = id + 1;
		return id;
	}
	if (tt_map_get(&fl->func_names, e->func, &id))
		return id;
	struct tt_str name = tt_event_name(e);
	id = tt_flame_name(fl, name.ptr, name.len);
	return id == UINT32_MAX || tt_map_put(&fl->func_names, e->func, id) < 0 ? UINT32_MAX : id;
}

static int tt_flame_begin(struct tt_sink *s, const struct tt_event *e)
{
	struct tt_flame *fl = (struct tt_flame *)s;
	struct tt_flame_thread *th = &fl->threads[e->thread->id];
	if (e->depth >= th->cap) {
		uint32_t cap = th->cap ? 2 * th->cap : 64;
		while (cap <= e->depth)
			cap *= 2;
		uint32_t *node = realloc(th->node, cap * sizeof(*node));
		if (node)
			th->node = node;
		int64_t *children = realloc(th->children, cap * sizeof(*children));
		if (children)
			th->children = children;
		if (!node || !children)
			return tt_error("out of memory");
		th->cap = cap;
	}
	uint32_t parent = e->depth ? th->node[e->depth - 1] : th->root;
	uint32_t name = tt_flame_event_name(fl, e);
	uint32_t node = name == UINT32_MAX ? name : tt_flame_child(fl, parent, name);
	if (node == UINT32_MAX)
		return tt_error("out of memory");
	th->node[e->depth] = node;
	th->children[e->depth] = 0;
	return 0;
}

static int tt_flame_end(struct tt_sink *s, const struct tt_event *e)
{
	struct tt_flame *fl = (struct tt_flame *)s;
	struct tt_flame_thread *th = &fl->threads[e->thread->id];
	if (e->depth >= th->cap)
		return 0; /* never begun: nothing to add it to */
	int64_t self = e->dur - th->children[e->depth];
	fl->nodes[th->node[e->depth]].self += self > 0 ? (uint64_t)self : 0;
	if (e->depth > 0)
		th->children[e->depth - 1] += e->dur;
	return 0;
}

static void tt_flame_destroy(struct tt_sink *s)
{
	struct tt_flame *fl = (struct tt_flame *)s;
	for (size_t i = 0; fl->threads && i < fl->nthreads; i++) {
		free(fl->threads[i].node);
		free(fl->threads[i].children);
	}
	for (size_t i = 0; i < fl->nnames; i++)
		free(fl->names[i]);
	free(fl->names);
	free(fl->threads);
	free(fl->site_names);
	free(fl->nodes);
	tt_map_free(&fl->children);
	tt_map_free(&fl->name_ids);
	tt_map_free(&fl->func_names);
	free(fl);
}

static const struct tt_sink_ops tt_flame_ops = {
	.start = tt_flame_start,
	.slice_begin = tt_flame_begin,
	.slice_end = tt_flame_end,
	.destroy = tt_flame_destroy,
};

/* ---- output ---- */

/* Children by name, so that a graph is drawn the same whatever the order of events. */
static const struct tt_flame *tt_sort_flame;
static int tt_flame_node_order(const void *a, const void *b)
{
	const struct tt_flame_node *n = tt_sort_flame->nodes;
	return strcmp(tt_sort_flame->names[n[*(const uint32_t *)a].name],
		      tt_sort_flame->names[n[*(const uint32_t *)b].name]);
}

/* Totals (self plus children's) bottom up, and each child list sorted by name; the
 * deepest level. Iterative: nesting may be deeper than the C stack. */
static int tt_flame_totals(struct tt_flame *fl, uint32_t *depth_out)
{
	uint32_t *order = malloc(fl->nnodes * sizeof(*order)), *depth = calloc(fl->nnodes, sizeof(*depth));
	uint32_t *kids = malloc(fl->nnodes * sizeof(*kids));
	if (!order || !depth || !kids) {
		free(order), free(depth), free(kids);
		return tt_error("out of memory");
	}
	size_t n = 0;
	order[n++] = 0; /* breadth first: parents before children */
	uint32_t deepest = 0;
	for (size_t i = 0; i < n; i++) {
		struct tt_flame_node *node = &fl->nodes[order[i]];
		size_t k = 0;
		for (uint32_t c = node->first_child; c; c = fl->nodes[c].next_sibling)
			kids[k++] = c;
		tt_sort_flame = fl;
		qsort(kids, k, sizeof(*kids), tt_flame_node_order);
		node->first_child = 0;
		for (size_t j = k; j-- > 0;) { /* relink in order */
			fl->nodes[kids[j]].next_sibling = node->first_child;
			node->first_child = kids[j];
		}
		for (size_t j = 0; j < k; j++) {
			depth[kids[j]] = depth[order[i]] + 1;
			deepest = depth[kids[j]] > deepest ? depth[kids[j]] : deepest;
			order[n++] = kids[j];
		}
	}
	for (size_t i = n; i-- > 0;) {
		struct tt_flame_node *node = &fl->nodes[order[i]];
		node->total = node->self;
		for (uint32_t c = node->first_child; c; c = fl->nodes[c].next_sibling)
			node->total += fl->nodes[c].total;
	}
	*depth_out = deepest;
	free(order), free(depth), free(kids);
	return 0;
}

/* Visits the nodes depth first, below the root, with their depth (1: a thread) and
 * the path of names that leads to them. */
typedef int (*tt_flame_visit)(struct tt_flame *fl, FILE *out, uint32_t node, const uint32_t *path,
			      uint32_t depth, double x, void *ctx);

static int tt_flame_walk(struct tt_flame *fl, FILE *out, tt_flame_visit visit, void *ctx)
{
	size_t cap = 64, depth = 0;
	uint32_t *path = malloc(cap * sizeof(*path));
	double *x = malloc(cap * sizeof(*x));
	if (!path || !x) {
		free(path), free(x);
		return tt_error("out of memory");
	}
	path[0] = 0;
	x[0] = 0;
	uint32_t cur = fl->nodes[0].first_child;
	double at = 0; /* the time before this node among its siblings, from the left */
	int rc = 0;
	while (cur && rc == 0) {
		if (depth + 2 >= cap) {
			cap *= 2;
			uint32_t *p = realloc(path, cap * sizeof(*p));
			double *q = p ? realloc(x, cap * sizeof(*q)) : NULL;
			if (p)
				path = p;
			if (q)
				x = q;
			if (!p || !q) {
				rc = tt_error("out of memory");
				break;
			}
		}
		path[++depth] = cur;
		x[depth] = at;
		rc = visit(fl, out, cur, path, (uint32_t)depth, at, ctx);
		if (fl->nodes[cur].first_child) { /* down */
			cur = fl->nodes[cur].first_child;
			continue;
		}
		/* right, or up until there is a right */
		for (;;) {
			uint32_t done = path[depth];
			at = x[depth] + (double)fl->nodes[done].total;
			depth--;
			if (fl->nodes[done].next_sibling) {
				cur = fl->nodes[done].next_sibling;
				break;
			}
			if (depth == 0) {
				cur = 0;
				break;
			}
		}
	}
	free(path);
	free(x);
	return rc;
}

/* A folded line holds the whole path of its node, so that nesting n deep would write
 * n^2/2 names: a line names at most this many frames, its outermost and innermost
 * halves around a marker that says how many levels between them were left out
 * (flame graph tools add up lines that come out the same). */
#define TT_FOLDED_MAX_FRAMES 512

static int tt_folded_line(struct tt_flame *fl, FILE *out, uint32_t node, const uint32_t *path,
			  uint32_t depth, double x, void *ctx)
{
	(void)x;
	size_t *cut = ctx;
	if (!fl->nodes[node].self)
		return 0;
	uint32_t outer = depth, inner_from = depth + 1;
	if (depth > TT_FOLDED_MAX_FRAMES) {
		outer = TT_FOLDED_MAX_FRAMES / 2;
		inner_from = depth - TT_FOLDED_MAX_FRAMES / 2 + 1;
		++*cut;
	}
	for (uint32_t d = 1; d <= outer; d++)
		fprintf(out, "%s%s", d > 1 ? ";" : "", fl->names[fl->nodes[path[d]].name]);
	if (inner_from <= depth)
		fprintf(out, ";(%" PRIu32 " levels left out)", inner_from - outer - 1);
	for (uint32_t d = inner_from; d <= depth; d++)
		fprintf(out, ";%s", fl->names[fl->nodes[path[d]].name]);
	fprintf(out, " %" PRIu64 "\n", fl->nodes[node].self);
	return 0;
}

#define TT_SVG_WIDTH 1200
#define TT_SVG_PAD 10
#define TT_SVG_ROW 17
#define TT_SVG_TOP 46
#define TT_SVG_CHAR 7.0 /* pixels of a 12 px monospace glyph */

struct tt_svg {
	double scale; /* pixels a nanosecond */
	uint32_t deepest;
};

static int tt_svg_frame(struct tt_flame *fl, FILE *out, uint32_t node, const uint32_t *path,
			uint32_t depth, double x, void *ctx)
{
	(void)path;
	const struct tt_svg *svg = ctx;
	const struct tt_flame_node *n = &fl->nodes[node];
	double w = (double)n->total * svg->scale;
	if (w < 0.3)
		return 0; /* too thin to see: its time is in its parent's width */
	const char *name = fl->names[n->name];
	uint64_t h = tt_flame_hash(name, strlen(name));
	char total[32], self[32];
	double y = TT_SVG_TOP + (double)(svg->deepest - depth) * TT_SVG_ROW;
	fprintf(out, "<g><title>");
	tt_xml_text(out, name, SIZE_MAX);
	fprintf(out, ": %s (%.2f%%), self %s</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
		"height=\"%d\" fill=\"rgb(%u,%u,%u)\" rx=\"2\"/>", tt_an_fmt_ns(total, (int64_t)n->total),
		100.0 * (double)n->total / (double)fl->nodes[0].total, tt_an_fmt_ns(self, (int64_t)n->self),
		TT_SVG_PAD + x * svg->scale, y, w, TT_SVG_ROW - 1, 205 + (unsigned)(h % 50),
		(unsigned)((h >> 8) % 180), (unsigned)((h >> 16) % 55));
	size_t fits = (size_t)((w - 6) / TT_SVG_CHAR);
	if (fits >= 3) {
		size_t len = strlen(name);
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">", TT_SVG_PAD + x * svg->scale + 3, y + 12);
		tt_xml_text(out, name, len <= fits ? len : fits - 2);
		fputs(len <= fits ? "" : "..", out);
		fputs("</text>", out);
	}
	fputs("</g>\n", out);
	return 0;
}

static int tt_flame_svg(struct tt_flame *fl, FILE *out, const char *title, uint32_t deepest)
{
	struct tt_svg svg = {.deepest = deepest};
	uint64_t all = fl->nodes[0].total;
	svg.scale = all ? (double)(TT_SVG_WIDTH - 2 * TT_SVG_PAD) / (double)all : 0;
	int height = TT_SVG_TOP + (int)deepest * TT_SVG_ROW + TT_SVG_PAD;
	char total[32];
	fprintf(out,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text { font: 12px monospace; fill: #000; } .head { font-size: 15px; }</style>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
		"<text class=\"head\" x=\"%d\" y=\"22\">",
		TT_SVG_WIDTH, height, TT_SVG_WIDTH, height, TT_SVG_PAD);
	tt_xml_text(out, title, SIZE_MAX);
	fprintf(out, "</text>\n<text x=\"%d\" y=\"38\">%s of self time; a frame's width is its "
		"time and its callees', hover for figures</text>\n",
		TT_SVG_PAD, tt_an_fmt_ns(total, (int64_t)all));
	int rc = tt_flame_walk(fl, out, tt_svg_frame, &svg);
	fputs("</svg>\n", out);
	return rc;
}

struct tt_sink *tt_flame_sink_new(void)
{
	struct tt_flame *fl = calloc(1, sizeof(*fl));
	if (fl)
		fl->sink.ops = &tt_flame_ops;
	return fl ? &fl->sink : NULL;
}

int tt_flame_write(struct tt_sink *s, FILE *out, bool svg, const char *title, size_t *frames,
		   size_t *stacks)
{
	struct tt_flame *fl = (struct tt_flame *)s;
	uint32_t deepest = 0;
	if (tt_flame_totals(fl, &deepest) < 0)
		return -1;
	*frames = fl->nnames;
	*stacks = fl->nnodes - 1;
	if (svg)
		return tt_flame_svg(fl, out, title, deepest);
	size_t cut = 0;
	int rc = tt_flame_walk(fl, out, tt_folded_line, &cut);
	if (cut)
		tt_warn("%zu stacks nested deeper than %u frames written with their middle left out "
			"(a marker says how many levels)", cut, TT_FOLDED_MAX_FRAMES);
	return rc;
}
