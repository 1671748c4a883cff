/* snapshot_room.py's program: the memory tt-spikes copies a snapshot's window into,
 * seen from /proc/self/maps. Prints the anonymous read-write mappings of 4 MiB or
 * more ("big START-END") three times: before any snapshot ("before"), once the
 * snapshot of tt_trigger("room") is written into argv[1] ("written"), and two seconds
 * of short scopes later ("idle"). */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <ticktrace.h>

static void maps(const char *when)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	printf("%s\n", when);
	while (f && fgets(line, sizeof line, f)) {
		unsigned long lo, hi, off;
		char perms[8], dev[16];
		unsigned long inode;
		if (sscanf(line, "%lx-%lx %7s %lx %15s %lu", &lo, &hi, perms, &off, dev, &inode) == 6 &&
		    inode == 0 && strncmp(perms, "rw", 2) == 0 && hi - lo >= (4ul << 20) &&
		    !strstr(line, "[stack]"))
			printf("big %lx-%lx\n", lo, hi);
	}
	if (f)
		fclose(f);
	fflush(stdout);
}

static int written(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d)))
		n += strncmp(e->d_name, "trigger-", 8) == 0 && strstr(e->d_name, ".ttr") &&
		     !strstr(e->d_name, ".tmp");
	if (d)
		closedir(d);
	return n;
}

/* Short scopes for `ms`, a millisecond apart. */
static void scopes(int ms)
{
	for (int i = 0; i < ms; i++) {
		TT_SCOPE("tick");
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	}
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	scopes(50);
	maps("before");
	if (tt_trigger("room") != 0) {
		printf("trigger refused\n");
		return 1;
	}
	for (int i = 0; i < 20000 && !written(argv[1]); i++)
		scopes(1);
	maps(written(argv[1]) ? "written" : "not written");
	scopes(2000);
	maps("idle");
	return 0;
}
