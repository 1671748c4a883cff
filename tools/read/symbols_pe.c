/* tt_symbols_* (read.h) in ticktrace.exe, where elfutils is not built: a Windows
 * program's functions named from its PE file's COFF symbols (pe.c); an ELF file's
 * (a Linux run's) by their offset in it, said once a file, and no file:line at all
 * (pe_dwarf_none.c says so). symbols.c is the whole reader, Linux's. */
#include "read_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One module's file, opened once. */
struct tt_pe_file {
	char *path;       /* as the run named it */
	struct tt_str build_id;
	struct tt_pe *pe; /* NULL: not a PE file, or unreadable (said) */
};

struct tt_symbols {
	char *debug_dir;
	struct tt_pe_file *files;
	size_t nfiles;
	char **names; /* what lookups returned, kept until tt_symbols_free */
	size_t nnames, names_cap;
};

struct tt_symbols *tt_symbols_new(const char *debug_dir)
{
	struct tt_symbols *s = calloc(1, sizeof(*s));
	if (s && debug_dir && !(s->debug_dir = strdup(debug_dir))) {
		free(s);
		s = NULL;
	}
	return s;
}

void tt_symbols_free(struct tt_symbols *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nfiles; i++) {
		tt_pe_free(s->files[i].pe);
		free(s->files[i].path);
		free((void *)s->files[i].build_id.ptr);
	}
	for (size_t i = 0; i < s->nnames; i++)
		free(s->names[i]);
	free(s->files);
	free(s->names);
	free(s->debug_dir);
	free(s);
}

/* The file name in a path of `len` bytes (Windows' or Linux's). */
static const char *tt_file_name_of(const char *path, size_t len)
{
	for (size_t i = len; i-- > 0;)
		if (path[i] == '\\' || path[i] == '/')
			return path + i + 1;
	return path;
}

/* The module's file read: the path the run named (this machine's), else where
 * tt_pe_local_path looks (Wine's Z:, --debug-dir, the current directory). */
static void tt_pe_file_load(struct tt_symbols *s, struct tt_pe_file *pf)
{
	const char *why;
	char *local = NULL;
	int fd = tt_open_regular(pf->path, &why);
	if (fd < 0 && (local = tt_pe_local_path(s->debug_dir, pf->path)))
		fd = tt_open_regular(local, &why);
	const char *opened = local && fd >= 0 ? local : pf->path;
	if (fd < 0)
		tt_warn("%s: cannot read it (%s): its functions are named %s+0xOFFSET, the offset in the file",
			pf->path, why, tt_file_name_of(pf->path, strlen(pf->path)));
	else if (!tt_pe_is(fd))
		tt_warn("%s: an ELF file, whose symbols ticktrace.exe does not read (elfutils is not built "
			"for Windows): its functions are named %s+0xOFFSET, the offset in the file; "
			"`ticktrace` on Linux names them", pf->path, tt_file_name_of(pf->path, strlen(pf->path)));
	else
		pf->pe = tt_pe_load(fd, opened, &pf->build_id);
	if (fd >= 0)
		close(fd);
	free(local);
}

static struct tt_pe_file *tt_pe_file_for(struct tt_symbols *s, const struct tt_module *m)
{
	for (size_t i = 0; i < s->nfiles; i++) {
		struct tt_pe_file *pf = &s->files[i];
		if (strlen(pf->path) == m->path.len && memcmp(pf->path, m->path.ptr, m->path.len) == 0 &&
		    pf->build_id.len == m->build_id.len && memcmp(pf->build_id.ptr, m->build_id.ptr, m->build_id.len) == 0)
			return pf;
	}
	struct tt_pe_file *grown = realloc(s->files, (s->nfiles + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	s->files = grown;
	struct tt_pe_file *pf = &s->files[s->nfiles];
	char *id = malloc(m->build_id.len + 1);
	*pf = (struct tt_pe_file){.path = strndup(m->path.ptr, m->path.len),
				  .build_id = {id, m->build_id.len}};
	if (!pf->path || !id) {
		free(pf->path);
		free(id);
		return NULL;
	}
	memcpy(id, m->build_id.ptr, m->build_id.len);
	s->nfiles++;
	tt_pe_file_load(s, pf);
	return pf;
}

/* The module's file, with the address in its image of the module's start in *image;
 * NULL: not read (*image then unset), or out of memory (*failed). */
static struct tt_pe_file *tt_pe_module(struct tt_symbols *s, const struct tt_module *m, uint32_t *image,
				       bool *failed)
{
	struct tt_pe_file *pf = tt_pe_file_for(s, m);
	*failed = !pf;
	if (!pf || !pf->pe)
		return NULL;
	if (tt_pe_section_rva(pf->pe, m->file_offset, image))
		return pf;
	tt_warn("%s: no section at file offset 0x%" PRIx64 " as the program loaded it (the file "
		"changed since, stripped?): its functions there are named by offset", pf->path, m->file_offset);
	pf->pe = (tt_pe_free(pf->pe), NULL); /* (said once) */
	return NULL;
}

int tt_symbols_lookup(void *ctx, const struct tt_file *file, uint64_t address, uint64_t tsc,
		      struct tt_symbol *out)
{
	struct tt_symbols *s = ctx;
	const struct tt_module *m = tt_file_module(file, address & ~TT_FUNC_LIBRARY_CALL, tsc);
	address &= ~TT_FUNC_LIBRARY_CALL;
	if (!tt_grow((void **)&s->names, &s->names_cap, s->nnames + 2, sizeof *s->names))
		return -1;
	char *name = NULL, *source = NULL;
	uint32_t line = 0, image;
	bool failed;
	struct tt_pe_file *pf = m ? tt_pe_module(s, m, &image, &failed) : NULL;
	int rc;
	if (m && failed)
		rc = -1;
	else if (pf)
		rc = tt_pe_name(pf->pe, pf->path, address - m->start + image, &name, &source, &line);
	else if (m)
	{
		const char *base = tt_file_name_of(m->path.ptr, m->path.len);
		rc = tt_asprintf(&name, "%.*s+0x%" PRIx64, (int)(m->path.ptr + m->path.len - base), base,
				 address - m->start + m->file_offset);
	}
	else
		rc = tt_asprintf(&name, "0x%" PRIx64, address);
	if (rc < 0) {
		free(name);
		free(source);
		return -1;
	}
	s->names[s->nnames++] = name;
	if (source)
		s->names[s->nnames++] = source;
	*out = (struct tt_symbol){name, source, line};
	return 0;
}

void tt_symbols_describe_sites(struct tt_symbols *s, struct tt_file *f)
{
	(void)s;
	size_t undescribed = 0;
	for (size_t k = 0; k < f->nsites; k++)
		undescribed += f->sites[k].undescribed;
	if (undescribed)
		tt_warn("%s: %zu call sites the run had not described are named by address: their "
			"descriptors are in the program's ELF file, which ticktrace.exe does not read "
			"(`ticktrace` on Linux names them)", f->path, undescribed);
}

int tt_symbols_file_address(struct tt_symbols *s, const struct tt_file *file, uint64_t address,
			    uint64_t tsc, uint64_t *out)
{
	const struct tt_module *m = tt_file_module(file, address, tsc);
	uint32_t image;
	bool failed;
	struct tt_pe_file *pf = m ? tt_pe_module(s, m, &image, &failed) : NULL;
	if (m && failed)
		return -1;
	if (pf)
		*out = tt_pe_image_base(pf->pe) + (address - m->start + image);
	else
		*out = m ? address - m->start + m->file_offset : address;
	return 0;
}
