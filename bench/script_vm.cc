// ticktrace-script-vm: a game loop that runs script functions in a tiny stack VM, the
// way PET's ExecuteScript example does: each script function is a scope named at run
// time after the function (TT_SCOPE_DYN), described with what it worked on, inside
// frames (TT_FRAME_MARK). One frame's path finding is slow; the spike log says which
// frame, in PET's words, and `report --frames` finds the frame.
//
//   ticktrace-script-vm [--frames N] [--out DIR]
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

#include "run_tool.h"
#include "ticktrace.h"

namespace {

enum Op : uint8_t { PUSH, ADD, MUL, LOOP, END };

struct Instruction {
	Op op;
	int64_t arg;
};

// A script function as loaded from a file: its name is known only at run time.
struct Function {
	std::string name;
	std::vector<Instruction> code;
};

class Vm {
public:
	int64_t execute(const Function &fn, int entity)
	{
		TT_SCOPE_DYN(fn.name); // one descriptor per distinct name, made on first use
		TT_DESCRIBE("entity %d", entity);
		std::vector<int64_t> stack;
		size_t loop_at = 0;
		int64_t loops = 0;
		for (size_t pc = 0; pc < fn.code.size(); pc++) {
			const Instruction &in = fn.code[pc];
			switch (in.op) {
			case PUSH: stack.push_back(in.arg); break;
			case ADD: binary(stack, [](int64_t a, int64_t b) { return a + b; }); break;
			case MUL: binary(stack, [](int64_t a, int64_t b) { return a * b % 1000003; }); break;
			case LOOP:
				loop_at = pc;
				loops = in.arg;
				break;
			case END:
				if (--loops > 0)
					pc = loop_at;
				break;
			}
		}
		return stack.empty() ? 0 : stack.back();
	}

private:
	template <class F> static void binary(std::vector<int64_t> &stack, F f)
	{
		int64_t b = stack.back();
		stack.pop_back();
		stack.back() = f(stack.back(), b);
	}
};

// A function that runs its body `loops` times.
Function make_function(const std::string &name, int64_t loops)
{
	return {name, {{PUSH, 1}, {LOOP, loops}, {PUSH, 3}, {MUL, 0}, {PUSH, 7}, {ADD, 0}, {END, 0}}};
}

} // namespace

int main(int argc, char **argv)
{
	int frames = 120;
	const char *dir = ".";
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--frames") == 0 && i + 1 < argc)
			frames = atoi(argv[++i]);
		else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
			dir = argv[++i];
		else {
			fprintf(stderr, "usage: ticktrace-script-vm [--frames N] [--out DIR]\n");
			return 2;
		}
	}
	if (frames < 2)
		frames = 2;
	tt_thread_name("game");
	// "loaded from the game's scripts"
	std::vector<Function> scripts;
	for (const char *kind : {"enemy_ai", "update_ui", "path_find", "play_sound"})
		scripts.push_back(make_function(std::string("script.") + kind, 80000));
	Vm vm;
	int64_t sum = 0;
	const int slow_frame = frames * 2 / 3;
	for (int frame = 1; frame <= frames; frame++) {
		TT_FRAME_MARK();
		TT_SCOPE("Tick");
		for (size_t s = 0; s < scripts.size(); s++) {
			Function &fn = scripts[s];
			// one frame's path finding searches far more than usual
			fn.code[1].arg = fn.name == "script.path_find" && frame == slow_frame ? 3200000 : 80000;
			sum += vm.execute(fn, frame * 10 + (int)s);
		}
	}
	TT_FRAME_MARK();

	char raw[4096], trace[4096];
	snprintf(raw, sizeof raw, "%s/script_vm.ttr", dir);
	snprintf(trace, sizeof trace, "%s/script_vm.pftrace", dir);
	int err = tt_dump(raw);
	if (err) {
		fprintf(stderr, "ticktrace-script-vm: cannot write %s: %s\n", raw, strerror(-err));
		return 1;
	}
	printf("%d frames (checksum %lld); the spike log, with a 10 ms threshold:\n\n", frames,
	       (long long)sum);
	char *spikes[] = {(char *)"ticktrace", (char *)"spikes", raw, (char *)"--threshold",
			  (char *)"10ms", (char *)"-q", NULL};
	char *report[] = {(char *)"ticktrace", (char *)"report", raw, (char *)"--frames", (char *)"-q", NULL};
	char *convert[] = {(char *)"ticktrace", (char *)"convert", raw, (char *)"-o", trace,
			   (char *)"--force", (char *)"-q", NULL};
	if (tt_run_tool(TT_DEMO_TOOL, spikes) < 0 || (putchar('\n'), tt_run_tool(TT_DEMO_TOOL, report)) < 0 ||
	    tt_run_tool(TT_DEMO_TOOL, convert) < 0)
		return 1;
	printf("\nraw trace: %s\nPerfetto trace (frames on their own track): %s\n", raw, trace);
	return 0;
}
