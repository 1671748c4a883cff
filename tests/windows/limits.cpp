// What the Windows runtime does at its limits, in C++ built with -Wall -Wextra
// -Werror against the static library: a full buffer (mode stop keeps the first
// events and counts the rest as dropped), tt_pause (neither kept nor counted), and
// TICKTRACE=0 (nothing written). Run by limits.py under Wine.
//
//   limits.exe OUT.ttr FLOOD
// Exit 0, or 3 when tt_dump says recording is off (-ECANCELED).
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "ticktrace.h"

struct tt_worker {
	int items = 0;
	void work()
	{
		TT_FUNC(); // a qualified name in C++: tt_worker::work
		items++;
	}
};

int main(int argc, char **argv)
{
	if (argc != 3) {
		std::fprintf(stderr, "usage: limits OUT.ttr FLOOD\n");
		return 2;
	}
	tt_thread_name("limits");
	tt_worker w;
	{
		TT_SCOPE("kept");
		w.work();
	}
	tt_pause();
	for (int i = 0; i < 1000; i++)
		TT_INSTANT("paused");
	tt_resume();
	int flood = std::atoi(argv[2]);
	for (int i = 0; i < flood; i++)
		TT_INSTANT("flood");
	int rc = tt_dump(argv[1]);
	if (rc == -ECANCELED)
		return 3;
	if (rc < 0) {
		std::fprintf(stderr, "limits: tt_dump: %d\n", rc);
		return 1;
	}
	return 0;
}
