/* Thread states' second source (TICKTRACE_SCHED): a thread's own counters (the
 * platform's, tt_os_counters_*: Linux's its CPU time, its wait on a run queue, its
 * timeslices and page faults), read by tt-sched, out of the threads' way, where perf_event_open is
 * refused (or TICKTRACE_SCHED=schedstat), and beside the switches: their run-queue
 * wait bounds the waits for a CPU after wake-ups the switches count as blocked, and
 * where the kernel accounts stolen time, their CPU time tells it apart. A reading of every thread
 * every millisecond would cost more than the recording: tt-sched follows each
 * thread's scopes in its records instead (memory, no system call: the records written
 * since its last look, through the scope machine), and reads the counters of a thread
 * whose deepest scope open TT__COUNTERS_AFTER_NS or more is not read yet: then while
 * it stays open (each TT__COUNTERS_BETWEEN_NS, or a quarter of the time it has been),
 * and once as soon as it ends. (The thread's last record said it before: a long scope
 * of short calls, its last record never that old, was read only by chance; outside
 * recheck of issue 35, finding 10.) Where the scopes open before the records it read
 * are not known, a thread whose last record is that old stands in (inside a scope, or
 * idle). A spike of a few milliseconds
 * gets readings near its start and its end; how near says the split's resolution
 * (common/analysis/states.c). The readings are kept per thread (sched lock), and
 * written as SCHEDSTAT sections. */
#include <string.h>

#include "core/core_internal.h"

/* (A scope TT__COUNTERS_AFTER_NS old is watched: core.h.) */
/* tt-sched wakes no sooner than this for a scope's first reading */
#define TT__COUNTERS_NEAR_NS 50000
/* and beside the switches, with nothing to read, no sooner than its next drain (sched.c:
 * TT__SCHED_DRAIN_NS) */
#define TT__COUNTERS_SWITCHED_NS 10000000
/* While it watches a scope, its looks come each period: a scope whose first reading
 * falls due before the next is read at this one, early, rather than woken for (each
 * wake-up cost it 15 to 50 us of CPU on a loaded VM, as much as three readings; with
 * 64 threads' scopes due at scattered moments, two or three wake-ups a period). An
 * early first reading only narrows a spike's start; a scope it reads that ends before
 * TT__COUNTERS_AFTER_NS costs a reading more. At most this much early: */
#define TT__COUNTERS_EARLY_MAX_NS (TT__COUNTERS_AFTER_NS / 2)
/* and read again each TT__COUNTERS_BETWEEN_NS (core.h), or each quarter of the time it
 * has been open */
/* Its looks, while it watches scopes, come each period or, where longer, each quarter
 * of the time the youngest watched has been open, up to TT__COUNTERS_END_MAX_NS: a
 * scope's end is seen within a quarter of its length and a few ms (a 40 ms one's within
 * 6 ms, not 40 looks for it: each a wake-up of 10 to 20 us on a loaded VM, most of a
 * short run's cost; a split's resolution within 4 ms however long); no farther apart
 * than TT__COUNTERS_AFTER_NS while a thread it reads is outside a watched scope (one it
 * opens is seen in time for its first reading). */
#define TT__COUNTERS_END_SHARE 4
#define TT__COUNTERS_END_MAX_NS 6000000
/* readings a thread's store holds at first: 10, eight threads' to a page (most threads
 * need a few: a first store of a page each was a fresh page each, whose fault, 13 to
 * 22 us on this VM, was a fifth of tt-sched's CPU time in the benchmark's 64 threads);
 * then a page's, then twice as many each time */
#define TT__COUNTERS_FIRST 10
#define TT__COUNTERS_PAGE (4096 / sizeof(struct tt_schedstat_sample))
#define TT__COUNTERS_MAX 65536        /* and at most (3 MiB): mode stop keeps the first */

/* tt-sched's CPU time for the counters' readings, past which it watches no new scope:
 * a share of the process's CPU time, or a little of one CPU's time since the run
 * began where that is more (a program that mostly sleeps has little CPU time of its
 * own, which a few readings would seem large against). Its readings cost 4 to 10 us each, and where
 * many threads want more CPUs than there are, every short sleep is a spike of
 * milliseconds that needs two (the benchmark's 64 threads on 2 CPUs: some 1,300 a
 * run, four times the 1 %). Charged: its looks and every wake-up for one
 * (20 to 40 us of its CPU time each on a loaded VM, most of what it costs: a look at
 * 60 quiet threads' records costs 5 us, a reading 4 to 15; charged only for those for a
 * reading, a program that mostly sleeps paid 35 ms for 60 spikes, as much as its
 * own work, two thirds of it not charged). The scopes left unread are counted, said at exit and in the trace (their spikes
 * have no split); those watched already are read to their end. (The shares are in
 * core.h: sched.c says them.) Only where the counters are the states' source: beside
 * the switches tt-sched's cost is theirs (sched_overhead_pct), and
 * its drains between looks would be charged here. */
uint64_t tt__counters_unread;
static int64_t tt__counters_spent_ns;
/* all its CPU time for the counters, charged or free, and what spikes paid back of it
 * (TT__COUNTERS_SPIKE_NS, core.h) */
static int64_t tt__counters_cost_ns, tt__counters_repaid_ns;
/* what spikes their threads slept through paid back, and earned: TT__COUNTERS_SLEPT_PCT
 * of each one's length (core.h) */
static int64_t tt__counters_slept_repaid_ns, tt__counters_slept_earned_ns;
static int64_t tt__counters_looked_ns; /* tt-sched's CPU time as its last look began (past its records) */
static int tt__counters_watching; /* that look left a scope watched: the next comes in a period */
/* that look's wait was a blind reading's alone: the wake-up is the records' share's (below) */
static int tt__counters_woke_blind;
/* Past its budget, its looks are for the scopes it leaves unread: each thread it first
 * finds one of is marked (TT_SCHEDSTAT_BUDGET: each of its spikes without a split then
 * names the budget), and the count grows. Once every thread it reads is marked, only
 * the count is left to them: they come half as often each time, from
 * TT__COUNTERS_OVER_BUDGET_NS to TT__COUNTERS_OVER_BUDGET_MAX_NS, until a thread is
 * not (they were most of tt-sched's CPU time in the benchmark on a loaded machine: 10
 * to 20 us a wake-up and as much a look, every 10 ms of a run whose wall time is 4 to
 * 7 times its quiet one's). */
static int64_t tt__counters_over_wait_ns;
int tt__counters_past;
/* (Past its budget, a scope open TT__COUNTERS_LONG_NS is read anyway: core.h.) */
/* Its looks while every thread it reads is quiet outside its scopes (below) */
#define TT__COUNTERS_QUIET_MAX_NS 8000000
int tt__counters_resting;

static uint64_t tt__counters_watches; /* scopes it began to read */
uint64_t tt__counters_blind;
int64_t tt__counters_blind_ns;
/* the first scopes it reads are not held to the budget: a short run's few spikes are
 * each split, whatever their reading cost against the little CPU time it used (a
 * program of a few ms, its looks dearer than that on a loaded machine) */
#define TT__COUNTERS_BUDGET_FREE 8
/* and not past this much of tt-sched's CPU time: 8 scopes open for most of a run, each
 * looked at each millisecond, were 2.4 to 4 ms of 0.4 s never charged (two threads
 * recording flat out, perf refused: tt-sched past its budget and share by 3 ms in CI) */
#define TT__COUNTERS_BUDGET_FREE_NS 2000000

/* Whether its CPU time is still free of the budget, with `more` scopes begun to read
 * beyond those it reads already (1: whether the next one it begins would be free). */
static int tt__counters_unbudgeted(uint64_t more)
{
	return tt__counters_watches + more <= TT__COUNTERS_BUDGET_FREE &&
	       tt__counters_cost_ns <= TT__COUNTERS_BUDGET_FREE_NS;
}

/* Charged to the budget: tt-sched's CPU time for the counters from the first scope
 * held to it on. What the free ones cost is no debt of the scopes after them: charged,
 * on a loaded machine (each of 8 scopes of 5 to 40 ms looked at each millisecond),
 * it took the budget's shares 1.2 s to pay for, and a tester's run of 0.3 s had
 * readings of its first 8 scopes alone (outside check of issue 35, D1). */
static void tt__counters_charge(int64_t ns)
{
	tt__counters_cost_ns += ns;
	if (!tt__counters_unbudgeted(0))
		tt__counters_spent_ns += ns;
}

/* A share of tt-sched's CPU time (the counters' budget, the records' share): what it
 * allows as last found, and when it was found past it (0: within it). */
struct tt__share {
	double allowed_ns;
	int64_t past_at_ns;
};

/* The process's CPU time and the clock as tt-sched first looked (below). */
static int64_t tt__counters_first_cpu_ns, tt__counters_first_ns;

/* Whether `spent` (ns) is past the share: past `floor` (what it allows with no system
 * call: one CPU's share since the run began, found again each time, and what else is
 * free) and past what `find` last allowed, found again (a system call or two: the
 * process's CPU time, a sum over every thread) only past both, and then at most each
 * `again_ns` while it stays past. */
static int tt__share_past(struct tt__share *sh, double spent, double floor, int64_t now_ns, int64_t again_ns,
			  double (*find)(int64_t now_ns))
{
	if (spent <= sh->allowed_ns || spent <= floor)
		return 0;
	if (now_ns - sh->past_at_ns < again_ns)
		return 1;
	sh->allowed_ns = find(now_ns);
	int past = spent > sh->allowed_ns;
	sh->past_at_ns = past ? now_ns : 0;
	return past;
}

/* One CPU's share of the time since tt-sched first looked, the larger of each share's
 * two (a program that mostly waits has little CPU time of its own, which a few
 * readings, or its first records, would seem large against). */
static double tt__share_one_cpu(int64_t now_ns)
{
	return (double)(now_ns - tt__counters_first_ns) * TT__COUNTERS_BUDGET_WALL_PCT / 100;
}

static struct tt__share tt__counters_budget; /* the budget as it last found it */

/* Whether the thread slept through half a spike's length or more of its watch so far
 * (between its first reading of it and its last: neither on a CPU nor waiting for one).
 * (A share of the watch's time, not a length, took a loaded machine's sleepers for
 * waiters: a 5 ms sleep, then 5 ms waiting for a CPU.) Where its last reading came after
 * the last look that saw the scope open, what came between is left out: the scope may
 * have ended there, and a wait for a CPU the thread is still in at a reading is not in
 * schedstat's yet (it counts a wait as it ends). The benchmark's 64 threads, each
 * waiting for a CPU after a 2 ms nap, read late, seemed to sleep through 5 to 8 spikes a
 * child, and their share paid for 1 to 6 ms of tt-sched's CPU time there. */
static int tt__counters_slept(const struct tt__counters *c)
{
	uint64_t first = c->watch_from > c->base ? c->watch_from - c->base : 0;
	if (first + 1 >= c->n)
		return 0;
	const struct tt_schedstat_sample *a = &c->at[first], *b = &c->at[c->n - 1];
	int64_t busy = (int64_t)(b->run_ns - a->run_ns) + (int64_t)(b->wait_ns - a->wait_ns);
	int64_t after = b->ns > c->open_seen_ns ? b->ns - c->open_seen_ns : 0;
	return 2 * (b->ns - a->ns - busy - after) >= TT__COUNTERS_SPIKE_NS;
}

/* What spikes slept through may still be paid back: what they earned, up to
 * TT__COUNTERS_SLEPT_WALL_PCT of one CPU's time since tt-sched first looked. */
static double tt__counters_slept_room(int64_t now_ns)
{
	double most = (double)(now_ns - tt__counters_first_ns) * TT__COUNTERS_SLEPT_WALL_PCT / 100;
	double earned = (double)tt__counters_slept_earned_ns;
	return (earned < most ? earned : most) - (double)tt__counters_slept_repaid_ns;
}

/* A watch whose scope was seen open TT__COUNTERS_SPIKE_NS or more, a spike (a scope its
 * records opened, not a last record standing in: an idle thread's would pass): its
 * readings so far (its first TT__COUNTERS_SPIKE_READINGS) paid back (core.h), as soon
 * as it is seen so (100 threads' spikes at once spent the budget on their first
 * readings, none paid back before their ends). A watch begun past the budget on what
 * spikes slept through earned (below) pays for all its readings from that, spike or
 * not. */
static void tt__counters_repay(struct tt__counters *c, int64_t now_ns)
{
	/* (the mean of those the budget pays for: not the blind readings, the records' share's) */
	uint64_t kept = tt__counters_kept - tt__counters_blind;
	if ((!c->on_room && c->open_seen_ns - c->since_ns < TT__COUNTERS_SPIKE_NS) || !kept || kept > tt__counters_kept)
		return;
	uint64_t readings = c->base + c->n - c->watch_from;
	readings = readings < TT__COUNTERS_SPIKE_READINGS || c->on_room ? readings : TT__COUNTERS_SPIKE_READINGS;
	if (readings <= c->repaid)
		return;
	/* (one its thread slept through, from a share of its own: reading a sleeping thread
	 * takes no CPU from it, and is what splits its spike) */
	int slept = c->on_room || tt__counters_slept(c);
	int64_t *repaid = slept ? &tt__counters_slept_repaid_ns : &tt__counters_repaid_ns;
	double back = (double)tt__counters_cost_ns / (double)kept * (double)(readings - c->repaid);
	double most = slept ? tt__counters_slept_room(now_ns)
			    : (double)(now_ns - tt__counters_first_ns) * TT__COUNTERS_SPIKE_WALL_PCT / 100 -
				      (double)tt__counters_repaid_ns;
	back = back < most ? back : most;
	c->repaid = (uint32_t)readings;
	if (back > 0) {
		tt__counters_spent_ns -= (int64_t)back;
		*repaid += (int64_t)back;
	}
}
/* Past its budget, how often tt-sched finds it again: the process's CPU time, a sum
 * over every thread, cost some 10 us of each look's 25 in the benchmark, as much as a
 * reading; readings begin again up to this late. */
#define TT__COUNTERS_BUDGET_AGAIN_NS 50000000
/* and while its idle allowance (core.h) grows, the program leaving its cores idle: a
 * short run held 50 ms past it lost a sixth of its spikes' splits */
#define TT__COUNTERS_START_AGAIN_NS 10000000
/* its idle allowance last found: the start-up one and the run's idle share, and the
 * idle time that found it */
static double tt__counters_start_ns, tt__counters_idle_ns;
static int tt__counters_idle_grew; /* (since the find before: found again sooner) */
static int tt__counters_start_found; /* the start-up share was found */
/* (the process's CPU time and the clock as tt-sched first looked: the run's start-up
 * (the program's loading, ticktrace's own) is not time its cores were left idle, and
 * held the allowance at nothing past the run's first spike) */
static uint64_t tt__counters_first_nivcsw; /* the process's involuntary switches then */
/* what the threads it read waited on a run queue between their readings: no core was
 * idle for them then (a loaded machine's, or the program's own threads' on too few
 * cores), nor for tt-sched (the benchmark's 64 threads on a loaded machine, their run
 * three times as long: an allowance of 1.5 % of their CPU time from cores seemingly
 * idle) */
static uint64_t tt__counters_waited_ns;
/* Each involuntary switch of the program's threads (getrusage, the process's: threads
 * tt-sched never read too) is a wait for a core at least this long (the scheduler's
 * base slice): the benchmark's threads, waiting at their start before tt-sched read
 * any, had an allowance of up to 2 ms of 100 ms of CPU time. */
#define TT__COUNTERS_SWITCH_WAIT_NS 750000.0

/* What the program's threads waited for a core since tt-sched first looked, at least. */
static double tt__counters_waited(void)
{
	struct tt_os_usage all;
	if (tt_os_usage(0, &all) != 0)
		return (double)tt__counters_waited_ns;
	uint64_t since = all.involuntary > tt__counters_first_nivcsw ? all.involuntary - tt__counters_first_nivcsw : 0;
	double switched = (double)since * TT__COUNTERS_SWITCH_WAIT_NS;
	return switched > (double)tt__counters_waited_ns ? switched : (double)tt__counters_waited_ns;
}

/* What its cores had idle in `wall` since tt-sched first looked, the process's CPU
 * time `cpu` now: neither used by the program nor waited for by its threads. */
static double tt__counters_idle(double wall, double cpu)
{
	return (double)tt__cores * wall - (cpu - (double)tt__counters_first_cpu_ns) - tt__counters_waited();
}

/* The start-up share, where no find came in the first second (no scope held to the
 * budget then: a program whose spikes all come after it), found as it ends: a program
 * that mostly sleeps, its 60 spikes past its first second, had the idle share alone
 * (some 12 ms of 2.5 s), less than its wake-ups cost once each was charged, and a
 * quarter of its spikes unsplit under ASan. */
static void tt__counters_start_share(int64_t now_ns)
{
	double wall = (double)(now_ns - tt__counters_first_ns);
	if (tt__counters_start_found || wall < TT__COUNTERS_START_NS)
		return;
	tt__counters_start_found = 1;
	double idle = tt__counters_idle(wall, (double)tt_os_process_cpu_ns()) * TT__COUNTERS_START_NS / wall;
	tt__counters_start_ns = idle > 0 ? idle * TT__COUNTERS_START_PCT / 100 : 0;
}

/* The budget as found now: its idle allowance and the larger of its shares. */
static double tt__counters_find_budget(int64_t now_ns)
{
	double wall = (double)(now_ns - tt__counters_first_ns);
	int starting = wall < TT__COUNTERS_START_NS;
	double cpu = (double)tt_os_process_cpu_ns();
	/* The idle allowance: a share of the CPU time its cores had that neither the
	 * program used nor its threads waited for, which costs the program nothing. A
	 * program that mostly waits (a short one's few spikes, a worker pool's waits, a
	 * server's requests far apart) has its spikes split; one whose threads want the
	 * cores (the benchmark's 64 threads on 2 CPUs, or any on a loaded machine) gets
	 * none beyond its shares, paid from its own work. In the first second, the start-up
	 * share, kept after it, not paid back (a debt held every scope after it unread: the
	 * free scopes' D1); all run long, the idle share, capped: only the first second's
	 * was a run's whose spikes all came after it (a tester's 60 threads' sleeps of 5 to
	 * 10 ms, a program that mostly sleeps: most unsplit on an idle machine). */
	double idle = tt__counters_idle(wall, cpu);
	if (starting)
		tt__counters_start_ns = idle > 0 ? idle * TT__COUNTERS_START_PCT / 100 : 0;
	tt__counters_start_found |= starting;
	tt__counters_idle_grew = idle > tt__counters_idle_ns;
	tt__counters_idle_ns = idle;
	double idle_share = idle > 0 ? idle * TT__COUNTERS_IDLE_PCT / 100 : 0;
	if (idle_share > wall * TT__COUNTERS_IDLE_MAX_PCT / 100)
		idle_share = wall * TT__COUNTERS_IDLE_MAX_PCT / 100;
	/* (the larger share, not both: a program that works keeps what the readings cost
	 * to its CPU time's share, one that mostly sleeps gets one CPU's) */
	cpu *= TT__COUNTERS_BUDGET_PCT / 100;
	double one_cpu = tt__share_one_cpu(now_ns);
	return tt__counters_start_ns + idle_share + (cpu > one_cpu ? cpu : one_cpu);
}

/* Whether tt-sched spent more than its budget, `look_ns` of this look's CPU time
 * with it where charged. The process's CPU time is read only past the budget it last
 * found (64 threads' took a tenth of tt-sched's time read each look), and past it
 * only each TT__COUNTERS_BUDGET_AGAIN_NS (or TT__COUNTERS_START_AGAIN_NS). */
static int tt__counters_on_room; /* (found past the budget, within what spikes slept through earned) */

static int tt__counters_over_budget(int64_t now_ns, int64_t look_ns)
{
	double spent = (double)tt__counters_spent_ns + (tt__counters_unbudgeted(0) ? 0 : (double)look_ns);
	tt__counters_on_room = 0;
	if (tt__counters_unbudgeted(1))
		return 0;
	/* (sooner while the program leaves its cores idle: not once they are busy, as the
	 * shares' budget then found again each 10 ms was most of what the benchmark's
	 * readings cost more) */
	int64_t again_ns = tt__counters_idle_grew ? TT__COUNTERS_START_AGAIN_NS : TT__COUNTERS_BUDGET_AGAIN_NS;
	int past = tt__share_past(&tt__counters_budget, spent, tt__counters_start_ns + tt__share_one_cpu(now_ns), now_ns,
				  again_ns, tt__counters_find_budget);
	/* Past it, what spikes slept through earned and have not spent yet is spent on the
	 * scopes due: a program that sleeps in its scopes has the next ones read before
	 * their own is earned. (Paid back only at a spike's end, it came too late: past the
	 * budget, looks 10 to 80 ms apart saw a third of the spikes of 64 threads asleep in
	 * scopes; and charged its looks, none was watched to earn more.) */
	tt__counters_on_room = past && tt__counters_slept_room(now_ns) > 0;
	return past && !tt__counters_on_room;
}

/* tt-sched's CPU time reading the threads' records since the run began; its share for
 * them as it last found it (ns), when, and whether it is past it (it reads none then);
 * how long it was, and since when. The process's CPU time is read at most each
 * TT__SCOPES_AGAIN_NS, and only past the share last found. */
static int64_t tt__scopes_spent_ns;
static struct tt__share tt__scopes_share;
static int tt__scopes_held;
static int64_t tt__scopes_held_ns, tt__scopes_held_since_ns;
#define TT__SCOPES_AGAIN_NS 50000000
/* the first records it reads are free of its share: a short run's first burst (a
 * tester's program of 0.1 s read 200,000 records at once, past a share of 0.25 ms) */
#define TT__SCOPES_FREE_NS 1000000

/* The slots tt-sched reads, which it walks each look rather than the registry, where
 * an exited thread's slot stays (mode stop and ring) until the run ends: 100 threads
 * one after another had it walk some 80 slots a look, 70 of them exited, a fifth of
 * its time. A slot is listed once the walk from the last listed one finds it (the
 * registry's slots are in registration order: by index), and leaves it once its
 * thread exited and its files are closed, or as the slot is recycled. Sched lock. */
static struct tt__slot **tt__counters_list;
static uint32_t tt__counters_listed, tt__counters_list_cap;
static struct tt__slot *tt__counters_list_from; /* the last slot listed; NULL: the head */
static uint32_t tt__counters_list_index; /* (its index + 1: the first not listed) */

/* The platform's directory the counters open faster in (tt_os_counters_dir: Linux's
 * /proc/self/task), in tt-sched's table, each thread's files opened in it; negative:
 * not yet (or it could not be: by their whole paths) */
static int tt__counters_task_dir = -1;

void tt__counters_after_fork(void)
{
	/* (the parent's tt-sched's table and process: not the child's, nor closed here) */
	tt__counters_task_dir = -1;
	/* (the child's tt-sched, its CPU time and the process's begin again; the parent's
	 * unread scopes are the parent's to say) */
	tt__counters_spent_ns = tt__counters_looked_ns = 0;
	tt__counters_cost_ns = tt__counters_repaid_ns = tt__counters_slept_repaid_ns = tt__counters_slept_earned_ns = 0;
	tt__counters_watching = 0;
	tt__counters_over_wait_ns = 0;
	tt__counters_past = 0;
	tt__counters_resting = 0;
	tt__counters_budget = (struct tt__share){0};
	tt__counters_watches = 0;
	tt__counters_start_ns = tt__counters_idle_ns = 0;
	tt__counters_start_found = 0;
	tt__counters_idle_grew = 0;
	tt__counters_first_ns = 0;
	tt__counters_waited_ns = 0;
	tt__counters_unread = 0;
	tt__counters_blind = 0;
	tt__counters_blind_ns = 0;
	tt__counters_kept = 0;
	tt__scopes_spent_ns = 0;
	tt__scopes_share = (struct tt__share){0};
	tt__scopes_held = 0;
	tt__scopes_held_ns = 0;
	/* (the parent's slots listed again, those of the child's threads alone kept) */
	tt__counters_listed = 0;
	tt__counters_list_from = NULL;
	tt__counters_list_index = 0;
}

int tt__counters_on; /* tt-sched reads the threads' counters */
int tt__counters_steal; /* format.h: TT_SCHEDSTAT_STEAL */

/* Descriptors of tt-sched's table that only it may close (another thread's close
 * would close the program's files of those numbers): handed over (lock held). */
#define TT__COUNTERS_TO_CLOSE 64
static struct tt_os_counters tt__counters_to_close[TT__COUNTERS_TO_CLOSE];
static unsigned tt__counters_closing;

/* A thread's first store (TT__COUNTERS_FIRST readings) comes from slabs of 128 and goes
 * back to a list as the thread goes, not mmap'd and munmap'd a thread (in the
 * benchmark's 64 threads, some 6 us each: a tenth of tt-sched's time); larger ones are
 * the platform's pages. Lock held. */
#define TT__COUNTERS_FIRST_BYTES (TT__COUNTERS_FIRST * sizeof(struct tt_schedstat_sample))
/* (512 bytes each: the slab aligns each to 64 bytes) */
static struct tt__slab tt__counters_first_slab = {.slab_size = 16 * 4096};
static void *tt__counters_first_free; /* each one's first word: the next's address */

static struct tt_schedstat_sample *tt__counters_alloc(size_t cap)
{
	if (cap != TT__COUNTERS_FIRST)
		return tt_os_alloc(cap * sizeof(struct tt_schedstat_sample));
	void *store = tt__counters_first_free;
	if (!store)
		return tt__slab_alloc(&tt__counters_first_slab, TT__COUNTERS_FIRST_BYTES);
	memcpy(&tt__counters_first_free, store, sizeof store);
	return store;
}

static void tt__counters_free(struct tt_schedstat_sample *at, size_t cap)
{
	if (cap != TT__COUNTERS_FIRST) {
		tt_os_free(at, cap * sizeof *at);
		return;
	}
	memcpy(at, &tt__counters_first_free, sizeof tt__counters_first_free);
	tt__counters_first_free = at;
}

/* Lock held: one more reading in the thread's store, or counted as lost. */
static struct tt_schedstat_sample *tt__counters_room(struct tt__counters *c)
{
	if (c->n == c->cap) {
		if (c->cap >= TT__COUNTERS_MAX) {
			if (!tt__config.mode->recycle_oldest)
				return NULL;
			/* A ring's: its oldest half goes */
			uint32_t half = c->n / 2;
			memmove(c->at, c->at + half, (c->n - half) * sizeof *c->at);
			c->n -= half;
			c->base += half;
		} else {
			size_t cap = !c->cap ? TT__COUNTERS_FIRST
				   : c->cap < TT__COUNTERS_PAGE ? TT__COUNTERS_PAGE
				   : 2u * c->cap < TT__COUNTERS_MAX ? 2u * c->cap : TT__COUNTERS_MAX;
			struct tt_schedstat_sample *grown = tt__counters_alloc(cap);
			if (!grown)
				return NULL;
			if (c->at) {
				memcpy(grown, c->at, c->n * sizeof *c->at);
				tt__counters_free(c->at, c->cap);
			}
			c->at = grown;
			c->cap = (uint32_t)cap;
		}
	}
	return &c->at[c->n];
}

/* TSC ticks into ns, and ns into ticks, at the run's rate `hz` (tt_os_anchor_hz) */
static int64_t tt__counters_ns(uint64_t ticks, uint64_t hz)
{
	return (int64_t)((double)ticks * 1e9 / (double)hz);
}

static uint64_t tt__counters_ticks(double ns, uint64_t hz)
{
	return (uint64_t)((double)hz * ns / 1e9);
}

uint64_t tt__counters_kept;
unsigned tt__counters_few;

/* Lock held: a reading into the thread's store, or counted as lost. */
static void tt__counters_store(struct tt__counters *c, const struct tt_schedstat_sample *reading)
{
	struct tt_schedstat_sample *to = tt__counters_room(c);
	if (to)
		*to = *reading;
	else
		c->lost++;
	c->n += !!to;
}

/* Lock held: the thread's own reading as it started, into its store, first (not
 * counted in tt__counters_kept: tt-sched's readings, whose mean cost spikes repay). */
static void tt__counters_early(struct tt__counters *c)
{
	if (!c->early_held)
		return;
	c->early_held = 0;
	c->own_first_ns = c->early.ns;
	tt__counters_store(c, &c->early);
}

static void tt__counters_keep(struct tt__counters *c, const struct tt_schedstat_sample *reading)
{
	tt__counters_early(c);
	tt__counters_store(c, reading);
	tt__counters_kept++;
}

/* The page faults of the process's threads but tt-sched's and tt-prefault's (every
 * thread's, those exited too: getrusage, less tt-sched's own, whose stores fault as
 * they grow, and less tt-prefault's faulting in, which it sums: while threads take
 * chunks it faulted between nearly every two ticks, and every thread's stat was
 * read again), read at most once a tick, before any thread's stat that tick; 0: not
 * read yet, or not known (tt-prefault faulting meanwhile). While it stays the same,
 * so does every thread's count. */
static uint64_t tt__counters_tick_faults;

static uint64_t tt__counters_process_faults(void)
{
	struct tt_os_usage all, own;
	if (tt__counters_tick_faults)
		return tt__counters_tick_faults;
	uint32_t busy = __atomic_load_n(&tt__prefault_busy, __ATOMIC_SEQ_CST);
	/* (its own first: a fault of its between the two can only make a change seen) */
	if (busy % 2 || tt_os_usage(1, &own) != 0 || tt_os_usage(0, &all) != 0)
		return 0;
	uint64_t prefault = __atomic_load_n(&tt__prefault_faults, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&tt__prefault_busy, __ATOMIC_SEQ_CST) != busy)
		return 0;
	tt__counters_tick_faults = 1 + all.faults - own.faults - prefault;
	return tt__counters_tick_faults;
}

/* Lock held: reads the thread's counters now into its store, its page faults too:
 * a spike's are counted between the readings before its start and after its end
 * (common/analysis/states.c), any of them (one taken while a scope around it was
 * watched, its faults then as the last reading had them, made a scope inside it
 * that no watch followed count 0). Where no thread of the process faulted since the
 * thread's faults were read, or the thread did not run since its last reading (its
 * CPU time the same), they are what they were: stat, the dearest file, is not read
 * (it was most of a reading's CPU time). */
static void tt__counters_read(struct tt__slot *slot)
{
	struct tt__counters *c = &slot->sched.counters;
	if (!c->files.tid && tt__counters_task_dir < 0)
		tt__counters_task_dir = tt_os_counters_dir();
	if (!c->files.tid && tt_os_counters_open(&c->files, slot->tid, tt__counters_task_dir) < 0) {
		c->gone = 1; /* (its /proc files are gone: it exited) */
		return;
	}
	struct tt_schedstat_sample reading = {0};
	if (c->n) {
		reading.minflt = c->at[c->n - 1].minflt;
		reading.majflt = c->at[c->n - 1].majflt;
	}
	uint64_t process_faults = tt__counters_process_faults();
	int faults = !c->n || !process_faults || process_faults != c->faults_seen;
	if (tt_os_counters_read(&c->files, &reading, faults, c->n ? c->at[c->n - 1].run_ns : 0) == 0) {
		if (c->n && reading.wait_ns > c->at[c->n - 1].wait_ns)
			tt__counters_waited_ns += reading.wait_ns - c->at[c->n - 1].wait_ns;
		tt__counters_keep(c, &reading);
		c->faults_seen = faults ? process_faults : c->faults_seen;
	}
	/* (below a small limit, its own table's too, opened again at its next reading:
	 * kept, a few threads' files would leave no descriptor to ask for the next
	 * threads' switches; the limit as found lately: getrlimit was one system call in
	 * three, beside the CPU clock and schedstat's pread) */
	if (tt__fd_few_lately())
		tt_os_counters_close(&c->files);
}

/* Whether tt-sched reads the slot's counters (lock held). */
static int tt__counters_read_for(const struct tt__slot *slot)
{
	const struct tt__sched *s = &slot->sched;
	return tt__counters_on && s->wanted && !s->counters.gone;
}

/* Lock held: its counters read now, by the calling thread (`own`: the slot's own;
 * TT__COUNTERS_EXITING: as it exits, the lock let go while it reads, a reading kept only
 * where none was stored meanwhile: tt-sched may read it, alive still, in between, and a
 * stream's writer write that one out, after which a store would put an earlier reading
 * after it), watched or not. A reading is some ten system calls, 20 to 40 us on a
 * loaded VM, which tt-sched's looks and the other exiting threads waited for on the lock. */
#define TT__COUNTERS_EXITING 2
static void tt__counters_read_here(struct tt__slot *slot, int own)
{
	struct tt__counters *c = &slot->sched.counters;
	/* (descriptors of the calling thread's table, for a moment; at its exit, the thread
	 * reads its own: one file, not two, each thread's last scope) */
	struct tt_schedstat_sample reading;
	int read;
	if (tt__fd_room_lately() < 0) { /* (below a small limit: not even for a moment; said at exit) */
		__atomic_add_fetch(&tt__counters_few, 1, __ATOMIC_RELAXED);
		return;
	}
	uint64_t stored = c->base + c->n; /* (what the store took, written out or not) */
	if (own == TT__COUNTERS_EXITING)
		tt__sched_unlock_held_signals();
	read = own ? tt_os_counters_read_own(slot->tid, &reading) : tt_os_counters_read_other(slot->tid, &reading);
	if (own == TT__COUNTERS_EXITING) {
		tt__sched_lock_held_signals();
		read = c->base + c->n != stored ? -1 : read;
	}
	if (read != 0)
		return;
	c->own_last_ns = own ? reading.ns : c->own_last_ns;
	tt__counters_keep(c, &reading);
}

/* Lock held: whether a thread is read at a dump or its exit whatever its records say:
 * inside a watched scope, or its buffer used up (tt-sched, which follows its records,
 * saw none past the last kept, and without this reading no reading bounds its scopes'
 * ends, among the dropped events: its stolen time, outside recheck r39 F1, a whole
 * run's, unknown). */
static int tt__counters_read_anyway(struct tt__slot *slot)
{
	const struct tt__counters *c = &slot->sched.counters;
	int exhausted = (__atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE) & TT__SLOT_EXHAUSTED) &&
			tt__counters_read_for(slot);
	return (c->watched || exhausted) && !c->gone;
}

/* A stretch of a thread's records with nothing recorded inside it (a scope that long),
 * found or not: the TSC of the record that began it (0: before the records read) and of
 * the one that ended it. */
struct tt__records_gap {
	int found;
	uint64_t from, to;
};

/* Whether the records in [begin, end) hold a stretch of ticks[k] or more after TSC
 * `since` between two with a time, for each of the first `n` lengths (ascending), in one
 * walk from the end: gaps[k], the latest such; or all come after `since` where `more`
 * records came before them (those of earlier chunks, not read: as if they did; from 0,
 * to the TSC of the earliest, as the stretch ended before it). *last: the TSC of the
 * last record with a time (0: none). */
static void tt__records_gaps(const struct tt_record *begin, const struct tt_record *end, uint64_t since,
			     const uint64_t *ticks, size_t n, int more, struct tt__records_gap *gaps,
			     uint64_t *last)
{
	uint64_t later = 0;
	size_t k = 0;
	*last = 0;
	for (const struct tt_record *r = end; r-- > begin;) {
		unsigned kind = TT_RECORD_KIND(r->word);
		if (!TT_RECORD_HAS_TIME(kind) && kind != TT_REC_END && kind != TT_REC_FUNC_EXIT)
			continue;
		*last = *last ? *last : r->tsc;
		/* (a stretch as long as a longer length is as long as the shorter ones) */
		for (; k < n && later && later - (r->tsc > since ? r->tsc : since) >= ticks[k]; k++)
			gaps[k] = (struct tt__records_gap){1, r->tsc, later};
		if (k == n)
			return;
		if (r->tsc <= since) {
			more = 0;
			break;
		}
		later = r->tsc;
	}
	for (; k < n; k++)
		gaps[k] = (struct tt__records_gap){more, 0, later};
}

/* Lock held: whether the calling thread, at its exit or at a dump of its own, reads the
 * slot's counters (its own) once more: read anyway (above), or where they are its
 * source, its records since its last reading hold a scope tt-sched did not watch (past
 * the budget, one it leaves unread is counted instead). */
static int tt__counters_due_last(struct tt__slot *slot)
{
	struct tt__counters *c = &slot->sched.counters;
	if (c->watched || c->gone || !tt__counters_read_for(slot) || slot->sched.on || !slot->current)
		return tt__counters_read_anyway(slot);
	/* Where they are its source, once more where its records since its last reading
	 * hold a scope tt-sched did not watch, as long as one it reads (a stretch with no
	 * record): its exit comes before tt-sched's next look, or tt-sched was kept off a
	 * CPU by the program's threads; its spike's end is bounded. Not otherwise (a
	 * reading at each exit: the benchmark's 64 threads had 62 of them, 19 us each on a
	 * loaded machine, 1 % of its CPU time; 200 threads of an instant each had two
	 * readings each). Its own records, settled (its chunk may be a compacted copy by
	 * now), those of its current chunk alone. */
	struct tt_anchor now;
	tt_os_anchor(&now);
	uint64_t hz = tt_os_anchor_hz(&tt__start_anchor, &now);
	if (!hz)
		return 0;
	uint64_t since = 0;
	if (c->n) {
		uint64_t back = tt__counters_ticks((double)(now.monotonic_ns - c->at[c->n - 1].ns), hz);
		since = back < now.tsc ? now.tsc - back : 0;
	}
	const struct tt_record *begin, *end;
	tt__chunk_extent(slot, slot->current, &begin, &end);
	int more = slot->first != slot->current;
	/* Past tt-sched's budget, as it would not begin to read it either: only one of a
	 * spike's length (it pays for its reading); a shorter one is left unread, counted
	 * with tt-sched's (its spike names the budget). The benchmark's 64 threads each
	 * read the end of their last 2 ms sleep at their exit, 12 to 15 us outside the
	 * budget, those the budget left unread too (a watched one's end is still read:
	 * most of them, 32 to 45 of 64 at load 8 to 19). */
	int past = tt__counters_past;
	uint64_t after = tt__counters_ticks(TT__COUNTERS_AFTER_NS, hz), last;
	const uint64_t ticks[2] = {after, tt__counters_ticks(TT__COUNTERS_SPIKE_NS, hz)};
	_Static_assert(TT__COUNTERS_AFTER_NS <= TT__COUNTERS_SPIKE_NS, "tt__records_gaps: lengths ascending");
	struct tt__records_gap gaps[2];
	tt__records_gaps(begin, end, since, ticks, past ? 2 : 1, more, gaps, &last);
	if (!gaps[0].found)
		return 0;
	int spike = past && gaps[1].found;
	const struct tt__records_gap *gap = &gaps[spike];
	/* And only the end of the thread's last record, or one lately: a reading at its
	 * exit bounds an end further back, with records after it, no better than none (the
	 * benchmark's 64 threads on 2 CPUs, each kept off them 5 ms and more in a scope
	 * tens of ms before their exit, read that end at their exit: 50 to 64 readings of
	 * 15 to 30 us a child, about 1 % of its CPU time). */
	if ((!past || spike) && (gap->to == last || now.tsc - gap->to <= after))
		return 1;
	if (!past || (gap->from && c->unread_scope == gap->from)) /* (tt-sched counted it) */
		return 0;
	c->unread_scope = gap->from;
	c->unread++;
	__atomic_add_fetch(&tt__counters_unread, 1, __ATOMIC_RELAXED);
	return 0;
}

void tt__counters_read_at_exit(struct tt__slot *slot)
{
	tt__counters_early(&slot->sched.counters);
	if (tt__counters_due_last(slot)) /* (the exiting thread's own: no gettid) */
		tt__counters_read_here(slot, TT__COUNTERS_EXITING);
}

/* At a dump, the dumping thread's own slot as at its exit: main's last scope before
 * exit() (outside test ot32 D9: perf refused, 2 to 5 runs in 40 had no reading after
 * it, tt-sched's look not due before the exit); another thread's, read anyway alone
 * (it may be recording: its records are not walked). */
void tt__counters_read_now(struct tt__slot *slot)
{
	int own = slot->tid == tt_os_thread_id();
	if (own ? tt__counters_due_last(slot) : tt__counters_read_anyway(slot))
		tt__counters_read_here(slot, own);
}

/* Lock held: the slots registered since the last look, listed. */
static void tt__counters_list_new(void)
{
	struct tt__slot *slot = tt__counters_list_from
				? __atomic_load_n(&tt__counters_list_from->next, __ATOMIC_ACQUIRE)
				: tt__registry_head();
	for (; slot; slot = __atomic_load_n(&slot->next, __ATOMIC_ACQUIRE)) {
		if (slot->index < tt__counters_list_index)
			continue; /* (walked from the head again: listed, or left, before) */
		if (tt__counters_listed == tt__counters_list_cap) {
			uint32_t cap = tt__counters_list_cap ? 2 * tt__counters_list_cap : 512;
			struct tt__slot **grown = tt_os_alloc(cap * sizeof *grown);
			if (!grown)
				return; /* (the next look tries again) */
			if (tt__counters_list) {
				memcpy(grown, tt__counters_list, tt__counters_listed * sizeof *grown);
				tt_os_free(tt__counters_list, tt__counters_list_cap * sizeof *grown);
			}
			tt__counters_list = grown;
			tt__counters_list_cap = cap;
		}
		tt__counters_list[tt__counters_listed++] = slot;
		slot->sched.counters.listed = tt__counters_listed;
		tt__counters_early(&slot->sched.counters);
		tt__counters_list_from = slot;
		tt__counters_list_index = slot->index + 1;
	}
}

/* Lock held: the slot of `c` off the list (the last one takes its place). */
static void tt__counters_unlist(struct tt__counters *c)
{
	if (!c->listed)
		return;
	struct tt__slot *moved = tt__counters_list[--tt__counters_listed];
	tt__counters_list[c->listed - 1] = moved;
	moved->sched.counters.listed = c->listed;
	c->listed = 0;
}

/* The time of the thread's last record that has one (0: none seen). Read while the
 * thread may be writing: a record not written yet, or left from a chunk's earlier use,
 * only makes a reading more or one less. Where the cursor has not moved since, the
 * same as then (no record read: a thread's records were most of its look's walk, 3 to
 * 4 cache misses each), unless a record was not written then. */
static uint64_t tt__counters_last_seen(struct tt__slot *slot)
{
	struct tt__counters *c = &slot->sched.counters;
	const struct tt__hot *hot = __atomic_load_n(&slot->hot, __ATOMIC_ACQUIRE);
	const char *cursor = __atomic_load_n(&hot->cursor, __ATOMIC_RELAXED);
	if (cursor && cursor == c->seen_cursor)
		return c->seen_last;
	const struct tt__chunk *chunk = slot->current;
	c->seen_cursor = NULL;
	if (!cursor || !chunk || cursor <= (const char *)(chunk + 1) ||
	    cursor > (const char *)chunk + TT__CHUNK_SIZE)
		return 0;
	/* (a scope's notes and values follow its record) */
	int written = 1; /* (no record after it left unwritten: 0, a pad) */
	for (const struct tt_record *r = (const struct tt_record *)cursor - 1;
	     r >= (const struct tt_record *)(chunk + 1) && r > (const struct tt_record *)cursor - 8; r--) {
		struct tt_record rec;
		rec.tsc = __atomic_load_n(&r->tsc, __ATOMIC_RELAXED);
		rec.word = __atomic_load_n(&r->word, __ATOMIC_RELAXED);
		unsigned kind = TT_RECORD_KIND(rec.word);
		if (TT_RECORD_HAS_TIME(kind) || kind == TT_REC_END || kind == TT_REC_FUNC_EXIT) {
			c->seen_cursor = written ? cursor : NULL;
			c->seen_last = rec.tsc;
			return rec.tsc;
		}
		written &= kind != TT_REC_PAD;
	}
	return 0;
}

/* Whether the thread's last records, its current chunk's, hold a scope's opening that
 * none after closes (walked back at most TT__COUNTERS_INSIDE_WALK records from its
 * cursor, as far as a gap's): where its scopes are not known (its records not followed),
 * its last record standing in is then a scope its records opened, not an idle
 * thread's quiet, and a spike once it has been quiet TT__COUNTERS_SPIKE_NS (outside
 * tester r49 F3: sqlite3 under record -f, its calls preempted or waiting on the disk,
 * 830 of 1,324 spikes unsplit, none paying its readings back). */
#define TT__COUNTERS_INSIDE_WALK 256
static int tt__counters_inside(struct tt__slot *slot)
{
	const struct tt__hot *hot = __atomic_load_n(&slot->hot, __ATOMIC_ACQUIRE);
	const char *cursor = __atomic_load_n(&hot->cursor, __ATOMIC_RELAXED);
	const struct tt__chunk *chunk = __atomic_load_n(&slot->current, __ATOMIC_ACQUIRE);
	if (!cursor || !chunk || cursor <= (const char *)(chunk + 1) || cursor > (const char *)chunk + TT__CHUNK_SIZE)
		return 0;
	uint32_t closed = 0;
	const struct tt_record *first = (const struct tt_record *)(chunk + 1), *r = (const struct tt_record *)cursor;
	for (int n = 0; r-- > first && n < TT__COUNTERS_INSIDE_WALK; n++) {
		unsigned kind = TT_RECORD_KIND(__atomic_load_n(&r->word, __ATOMIC_RELAXED));
		switch (kind) {
		case TT_REC_END:
		case TT_REC_FUNC_EXIT:
			closed++;
			break;
		case TT_REC_BEGIN:
		case TT_REC_BEGIN_ARG:
		case TT_REC_ENDBEGIN: /* (its end closes one before it: the count stays) */
		case TT_REC_FUNC_ENTER:
			if (!closed)
				return 1;
			closed -= kind != TT_REC_ENDBEGIN;
			break;
		case TT_REC_DROPPED:
			return 0;
		default:
			break;
		}
	}
	return 0;
}

/* As of the look begun at TSC `now`: a record written since stands at `now` (no quiet
 * began; before, `now - last` wrapped, the thread quiet for ages, tt-sched resting 8 ms
 * as it recorded, the wrapped ticks' conversion undefined). */
uint64_t tt__counters_last(struct tt__slot *slot, uint64_t now)
{
	uint64_t last = tt__counters_last_seen(slot);
	return last < now ? last : now;
}

/* ---- which scopes a thread has open: its records read as they come ---- */

/* [r, end) into the machine (the decoder's rules, as the live detector's feed drives
 * them); where it stopped: before a gap's first record whose second is not read yet.
 * It reads every record its thread writes: the machine a copy here, kept in registers
 * (through the thread's, its loads and stores were twice the loop's time). */
static const struct tt_record *tt__scopes_records(struct tt__scopes_read *t, const struct tt_record *r,
						  const struct tt_record *end)
{
	struct tt_scopes m = t->machine;
	uint64_t *restrict opened = t->opened;
	for (; r < end; r++) {
		uint64_t word = __atomic_load_n(&r->word, __ATOMIC_RELAXED);
		uint64_t payload = TT_RECORD_PAYLOAD(word), key;
		switch (TT_RECORD_KIND(word)) {
		case TT_REC_END:
			tt_scopes_end(&m, 0);
			continue;
		case TT_REC_ENDBEGIN:
			tt_scopes_end(&m, 0);
			/* fall through */
		case TT_REC_BEGIN:
		case TT_REC_BEGIN_ARG:
			key = payload;
			break;
		case TT_REC_FUNC_ENTER:
			key = payload | TT_KEY_FUNC;
			break;
		case TT_REC_FUNC_EXIT:
			tt_scopes_func_exit(&m, payload | TT_KEY_FUNC, 0, 0);
			continue;
		case TT_REC_DROPPED: { /* (the scopes that ended in the lost events close, those
				       * begun in them open, as of the gap's first) */
			if (r + 1 == end) {
				t->machine = m;
				return r;
			}
			uint64_t depths = TT_RECORD_PAYLOAD(__atomic_load_n(&r[1].word, __ATOMIC_RELAXED));
			tt_scopes_gap(&m, TT_GAP_CLOSES(depths));
			for (uint32_t n = TT_GAP_OPENS(depths); n > 0; n--)
				if (tt_scopes_unbegun(&m, TT_KEY_UNBEGUN, 0) > 0)
					opened[m.depth - 1] = __atomic_load_n(&r->tsc, __ATOMIC_RELAXED);
			r++;
			continue;
		}
		default:
			continue;
		}
		if (tt_scopes_open(&m, key, 0) > 0)
			opened[m.depth - 1] = __atomic_load_n(&r->tsc, __ATOMIC_RELAXED);
	}
	t->machine = m;
	return end;
}

int64_t tt__scopes_held_for(void)
{
	return tt__scopes_held_ns + (tt__scopes_held ? tt_os_monotonic_ns() - tt__scopes_held_since_ns : 0);
}

/* The records' share as found now. */
static double tt__scopes_find_share(int64_t now_ns)
{
	(void)now_ns;
	return (double)tt_os_process_cpu_ns() * TT__SCOPES_PCT / 100;
}

/* Whether tt-sched follows the threads' scopes at this look (past TT__SCOPES_FREE_NS). */
static int tt__scopes_within_share(int64_t now_ns)
{
	double one_cpu = tt__share_one_cpu(now_ns);
	int held = tt__share_past(&tt__scopes_share, (double)tt__scopes_spent_ns,
				  one_cpu > TT__SCOPES_FREE_NS ? one_cpu : TT__SCOPES_FREE_NS, now_ns,
				  TT__SCOPES_AGAIN_NS, tt__scopes_find_share);
	if (held && !tt__scopes_held)
		tt__scopes_held_since_ns = now_ns;
	if (!held && tt__scopes_held)
		tt__scopes_held_ns += now_ns - tt__scopes_held_since_ns;
	tt__scopes_held = held;
	return !held;
}

/* Whether the records' share, as last found, has room for the blind readings that stand
 * in for following them (charged to it, not to the budget: below); past it by
 * TT__SCOPES_FREE_NS, they come as they did past the budget. */
static int tt__scopes_blind_room(int64_t now_ns)
{
	double one_cpu = tt__share_one_cpu(now_ns);
	double allowed = tt__scopes_share.allowed_ns > one_cpu ? tt__scopes_share.allowed_ns : one_cpu;
	return (double)tt__scopes_spent_ns <= allowed + TT__SCOPES_FREE_NS;
}

/* tt-sched's CPU time for blind readings, charged to the records' share. */
static void tt__counters_blind_spend(int64_t ns)
{
	tt__scopes_spent_ns += ns;
	__atomic_store_n(&tt__counters_blind_ns, tt__counters_blind_ns + ns, __ATOMIC_RELAXED);
}

/* Whether the chunk's first record is still `first` (the ring, or the drain, recycles a
 * chunk zeroed; the arena's memory stays). */
static int tt__scopes_same(const struct tt__chunk *chunk, const struct tt_record *first)
{
	const struct tt_record *r = (const struct tt_record *)(chunk + 1);
	return __atomic_load_n(&r->tsc, __ATOMIC_ACQUIRE) == first->tsc &&
	       __atomic_load_n(&r->word, __ATOMIC_ACQUIRE) == first->word && first->word;
}

/* The machine empty: what the records it reads next close of the scopes before them is
 * not known. */
static void tt__scopes_restart(struct tt__scopes_read *t)
{
	tt_scopes_finish(&t->machine);
	t->partial = 1;
	t->chunk = NULL;
}

/* At most this many of a thread's chunks are read a look: where it wrote more since
 * the last (tt-sched kept off the CPUs a while, or its first look at a thread that
 * recorded long before), it goes on from the thread's current chunk, the scopes open
 * before not known, rather than spend a look's milliseconds (a chunk's 4,095 records
 * cost it 8 to 30 us). */
#define TT__SCOPES_CHUNKS_MAX 8
/* records read a look, at least, that it charges to their share */
#define TT__SCOPES_CLOCKED 1024

/* Lock held: the records the slot's thread wrote since the last look, into its machine
 * (how many):
 * the rest of the chunk where it stopped, and the chunks after it (the current chunk's
 * up to the calls its exits may still erase). Where the ring or the drain took that
 * chunk before it was read to its end, the reading begins again at the thread's current
 * chunk. An exited thread is not read (its last chunk may be a copy, freed once
 * written). Records read while they are recycled only give a reading more or one less,
 * never a wrong one. */
static size_t tt__scopes_follow(struct tt__slot *slot)
{
	size_t n = 0;
	struct tt__scopes_read *t = &slot->sched.counters.scopes;
	const struct tt__chunk *current = __atomic_load_n(&slot->current, __ATOMIC_ACQUIRE);
	if (!current || (__atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE) & TT__SLOT_EXITED))
		return 0;
	if (!t->machine.keys) /* (its first look: from its first chunk) */
		t->machine = (struct tt_scopes){.keys = t->keys, .cap = TT__SCOPES_KEPT, .max_depth = TT__SCOPES_KEPT};
	const struct tt__chunk *chunk = t->chunk;
	uint32_t from = t->read;
	const struct tt__hot *hot = __atomic_load_n(&slot->hot, __ATOMIC_ACQUIRE);
	if (chunk == current && __atomic_load_n(&hot->cursor, __ATOMIC_RELAXED) ==
				     (const char *)((const struct tt_record *)(chunk + 1) + from))
		return 0; /* (nothing new: most threads at most looks) */
	if (chunk && !tt__scopes_same(chunk, &t->first)) {
		tt__scopes_restart(t);
		chunk = current;
		from = 0;
	} else if (!chunk) {
		chunk = t->partial ? current : __atomic_load_n(&slot->first, __ATOMIC_ACQUIRE);
		/* (a ring's oldest recycled, or mode stream's written and given back) */
		t->partial |= (__atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE) & TT__SLOT_WRAPPED) ||
			      __atomic_load_n(&slot->written, __ATOMIC_RELAXED);
		from = 0;
	}
	for (int chunks = 0; chunk && chunks <= TT__SCOPES_CHUNKS_MAX; chunks++) {
		if (chunks == TT__SCOPES_CHUNKS_MAX) { /* (a thread far ahead: its current chunk) */
			tt__scopes_restart(t);
			chunk = __atomic_load_n(&slot->current, __ATOMIC_ACQUIRE);
			from = 0;
		}
		const struct tt_record *begin, *end;
		/* (on to the successor found with its end: tt__chunk_extent) */
		const struct tt__chunk *next = tt__chunk_extent(slot, chunk, &begin, &end);
		end = tt__settled_end(slot, chunk, begin, end);
		if (begin == end)
			return n;
		struct tt_record first = {__atomic_load_n(&begin->tsc, __ATOMIC_ACQUIRE),
					  __atomic_load_n(&begin->word, __ATOMIC_ACQUIRE)};
		const struct tt_record *start = begin + from < end ? begin + from : end;
		const struct tt_record *at = tt__scopes_records(t, start, end);
		n += (size_t)(at - start);
		if (!tt__scopes_same(chunk, &first)) {
			tt__scopes_restart(t);
			return n;
		}
		t->chunk = chunk;
		t->first = first;
		t->read = (uint32_t)(at - begin);
		if (at != end)
			return n;
		if (!next && __atomic_load_n(&chunk->next, __ATOMIC_ACQUIRE)) {
			from = t->read; /* (its thread left it as it was read: the rest of it first) */
			continue;
		}
		chunk = next;
		from = 0;
	}
	return n;
}

/* Whether the thread is outside every scope, as far as its records followed tell:
 * those from its start (or a gap's, which says its depths) closed every scope they
 * opened. Such a thread (about to exit, a worker between tasks, one waiting for a CPU)
 * is in no spike: neither read nor left unread. */
static int tt__scopes_outside(const struct tt__scopes_read *t)
{
	return t->machine.keys && !t->partial && !t->machine.depth;
}

/* The TSC of the record that opened the thread's deepest scope open since `by` or
 * before (0: none), and in *next that of the scope inside it, the next one due (0:
 * none). Where the scopes open before the first record read are not known and none
 * after is open, its last record stands in: a thread that recorded nothing since `by`
 * is inside a scope, or idle. */
static uint64_t tt__scopes_due(const struct tt__scopes_read *t, uint64_t last, uint64_t by, uint64_t *next)
{
	uint32_t depth = t->machine.keys ? t->machine.depth : 0, i = 0;
	while (i < depth && t->opened[i] <= by)
		i++;
	*next = i < depth ? t->opened[i] : 0;
	if (depth || tt__scopes_outside(t) || !last)
		return i ? t->opened[i - 1] : 0;
	*next = last > by ? last : 0;
	return last <= by ? last : 0;
}

/* Whether the thread's counters were read since its last record (TSC `last`), as of
 * `now`. */
static int tt__counters_read_since(const struct tt__counters *c, uint64_t last, const struct tt_anchor *now,
				   uint64_t hz)
{
	int64_t last_ns = now->monotonic_ns - tt__counters_ns(now->tsc - last, hz);
	return c->n && c->at[c->n - 1].ns > last_ns;
}

/* The TSC of the record that opened the thread's deepest scope open since `by` or
 * before, as far as its records followed tell (0: none; no last record stands in). */
static uint64_t tt__scopes_deepest(const struct tt__scopes_read *t, uint64_t by)
{
	uint32_t depth = t->machine.keys ? t->machine.depth : 0, i = 0;
	while (i < depth && t->opened[i] <= by)
		i++;
	return i ? t->opened[i - 1] : 0;
}

/* Whether the scope opened at `tsc` is still open. */
static int tt__scopes_open(const struct tt__scopes_read *t, uint64_t tsc)
{
	for (uint32_t i = 0; t->machine.keys && i < t->machine.depth; i++)
		if (t->opened[i] == tsc)
			return 1;
	return 0;
}

int64_t tt__counters_tick(int64_t period_ns, int alone)
{
	int64_t own_ns = tt_os_thread_cpu_ns();
	if (!tt__counters_first_ns) {
		struct tt_os_usage all;
		tt_os_usage(0, &all);
		tt__counters_first_nivcsw = all.involuntary;
		tt__counters_first_cpu_ns = tt_os_process_cpu_ns();
		tt__counters_first_ns = tt_os_monotonic_ns();
	}
	/* (the last look's CPU time with the wake-up for this one: its own clock once a look,
	 * not at its end too, where it was one of tt-sched's three system calls a look) */
	if (tt__counters_looked_ns && tt__counters_woke_blind)
		tt__counters_blind_spend(own_ns - tt__counters_looked_ns);
	else if (tt__counters_looked_ns)
		tt__counters_charge(own_ns - tt__counters_looked_ns);
	tt__counters_looked_ns = own_ns;
	struct tt_anchor now;
	tt_os_anchor(&now);
	uint64_t hz = tt_os_anchor_hz(&tt__start_anchor, &now);
	if (!hz)
		return period_ns;
	int64_t due_ns = INT64_MAX; /* the soonest first reading due */
	int watching = 0, unmarked = 0; /* (threads read, not watched, none of whose scopes was left unread) */
	int64_t youngest_ns = INT64_MAX; /* how long the youngest scope watched has been open */
	int unwatched = 0; /* threads read, not inside a watched scope */
	/* threads read; of them, those outside every scope, read since their last record
	 * or quiet since TT__COUNTERS_AFTER_NS, and of those the ones not read since it;
	 * the newest last record of theirs */
	int reads = 0, quiet = 0, unread_since = 0;
	int switched = 1; /* (every thread read has its switches: the counters only beside them) */
	int64_t blind_wait_ns = INT64_MAX; /* the soonest blind reading due (below) */
	int blind_due = 0; /* blind readings taken after the threads' walk (below) */
	uint64_t kept_before = tt__counters_kept;
	int blind_room = tt__scopes_blind_room(now.monotonic_ns);
	uint64_t newest = 0;
	uint64_t after_ticks = tt__counters_ticks(TT__COUNTERS_AFTER_NS, hz);
	uint64_t long_ticks = tt__counters_ticks(TT__COUNTERS_LONG_NS, hz);
	int64_t early_ns = !tt__counters_watching ? 0 : period_ns < TT__COUNTERS_EARLY_MAX_NS ? period_ns
			 : TT__COUNTERS_EARLY_MAX_NS;
	uint64_t read_ticks = after_ticks - tt__counters_ticks((double)early_ns, hz);
	uint64_t early_ticks = after_ticks - tt__counters_ticks(TT__COUNTERS_EARLY_MAX_NS, hz);
	tt__counters_tick_faults = 0;
	if (alone)
		tt__counters_start_share(now.monotonic_ns);
	int over_budget = alone && tt__counters_over_budget(now.monotonic_ns, 0);
	/* (only of threads whose counters are their states' source: beside the switches,
	 * for stolen time and wake-ups alone, the last record stands in, as it did; not only where perf
	 * was refused for every thread: threads refused as they started, tt-sched not yet
	 * told, had their scopes unknown, and were read outside them, each 8 ms) */
	int follow = tt__scopes_within_share(now.monotonic_ns);
	/* (tt-sched's signals are blocked: the lock alone, two system calls fewer a tick) */
	tt__sched_lock_held_signals();
	while (tt__counters_closing)
		tt_os_counters_close(&tt__counters_to_close[--tt__counters_closing]);
	/* The threads' records first, charged to their own share, not the budget: what
	 * they cost depends on how the threads record (2 ns a record to 7, those a
	 * thread recording flat out wrote a moment before, in its core's cache). */
	tt__counters_list_new();
	size_t followed = 0;
	for (uint32_t i = 0; follow && i < tt__counters_listed; i++) {
		struct tt__slot *slot = tt__counters_list[i];
		if (tt__counters_read_for(slot) && !slot->sched.sw.map)
			followed += tt__scopes_follow(slot);
	}
	/* (a few, a few us: charged as before, not worth the clock's reading, 0.5 to 1 us) */
	if (followed >= TT__SCOPES_CLOCKED) {
		int64_t followed_ns = tt_os_thread_cpu_ns();
		tt__scopes_spent_ns += followed_ns - own_ns;
		own_ns = tt__counters_looked_ns = followed_ns;
	}
	for (uint32_t i = 0; i < tt__counters_listed; i++) {
		struct tt__slot *slot = tt__counters_list[i];
		struct tt__sched *s = &slot->sched;
		struct tt__counters *c = &s->counters;
		if (!s->wanted) { /* (exited: its files go, here in tt-sched's table; never read again) */
			if (c->files.tid)
				tt_os_counters_close(&c->files);
			tt__counters_unlist(c);
			i--; /* (the last one took its place) */
			continue;
		}
		if (!tt__counters_read_for(slot))
			continue;
		reads++;
		switched &= s->sw.map != NULL;
		/* (the scopes open when it follows again are not known; one not followed yet
		 * is followed from its start) */
		if ((!follow || s->sw.map) && c->scopes.machine.keys)
			tt__scopes_restart(&c->scopes);
		uint64_t last = tt__counters_last(slot, now.tsc), next;
		/* (recording while its records are not followed: its scopes not known from then on) */
		c->unfollowed |= !follow && !s->sw.map && last > c->blind_tsc && c->blind_tsc;
		c->blind_tsc = c->blind_tsc ? c->blind_tsc : now.tsc;
		/* (a thread read blind at its pace is looked at each TT__COUNTERS_BLIND_NS or
		 * less: its quiet is found at those looks, not woken for, its first reading
		 * taken early, as a watching look's are) */
		int paced = c->unfollowed && blind_room && !follow, woken = 0; /* (woken for: below) */
		uint64_t open = tt__scopes_due(&c->scopes, last, now.tsc - (paced ? early_ticks : read_ticks), &next);
		int read = 0; /* (a reading taken this look: the first of a watch begun after it) */
		int resume = 0; /* (a scope around it, watched before it: read on, as it was) */
		if (c->watched && !tt__scopes_open(&c->scopes, c->watched) && last != c->watched) {
			/* it ended (or, its scopes not known, the thread recorded again): the
			 * reading after */
			tt__counters_read(slot);
			/* (a spike its thread slept through earns its share first) */
			int64_t seen_ns = c->open_seen_ns - c->since_ns;
			int slept = seen_ns >= TT__COUNTERS_SPIKE_NS && tt__counters_slept(c);
			tt__counters_slept_earned_ns += slept ? seen_ns * TT__COUNTERS_SLEPT_PCT / 100 : 0;
			tt__counters_repay(c, now.monotonic_ns);
			c->watched = 0;
			read = 1;
			resume = open >= c->outer && tt__scopes_open(&c->scopes, c->outer);
			c->outer = resume ? c->outer : 0;
		}
		/* A scope due: the thread's deepest open since the threshold, not the one
		 * watched (one inside it, or one around it that goes on after it ended). */
		int due = open && open != c->watched && (!c->watched || open > c->watched);
		if (due && !resume && !over_budget && alone)
			over_budget = tt__counters_over_budget(now.monotonic_ns, tt_os_thread_cpu_ns() - own_ns);
		/* Past the budget, the deepest scope open TT__COUNTERS_LONG_NS: what is
		 * watched is read to its end, no scope inside it but one that long (outside
		 * recheck r42 N4: xz's 100 to 300 ms scopes inside its thread's watched one,
		 * read each quarter of its age, unread for up to 0.84 s); and once one inside
		 * ended, on from it, not the next short one inside. */
		uint64_t long_open = over_budget ? tt__scopes_deepest(&c->scopes, now.tsc - long_ticks) : 0;
		if (resume && over_budget && due) {
			open = long_open > c->outer ? long_open : c->outer;
			due = open != c->watched;
		}
		/* Past the budget, a thread read blind: a scope it opened (followed, or its last
		 * record standing in for one: a spike likely, which pays its readings back),
		 * in a blind reading's stead, each TT__COUNTERS_BETWEEN_NS at most: its blind
		 * readings, taken past the budget at that pace, had spent it, and its naps,
		 * the calls the kernel preempted, were left unread, inside a long one watched
		 * or not (outside tester r49 F3) */
		int instead = due && over_budget && !resume && open != long_open && c->unfollowed &&
			      now.monotonic_ns - c->instead_ns >= TT__COUNTERS_BETWEEN_NS &&
			      (tt__scopes_open(&c->scopes, open) || (open == last && tt__counters_inside(slot)));
		if (c->watched && (!due || (over_budget && !instead && long_open <= c->watched))) {
			c->open_seen_ns = tt__scopes_open(&c->scopes, c->watched) || (c->inside && last == c->watched)
					  ? now.monotonic_ns : c->open_seen_ns;
			if (now.monotonic_ns >= c->next_ns) {
				tt__counters_read(slot);
				int64_t open_ns = now.monotonic_ns - c->since_ns;
				c->next_ns = now.monotonic_ns + (open_ns / 4 > TT__COUNTERS_BETWEEN_NS
								 ? open_ns / 4 : TT__COUNTERS_BETWEEN_NS);
			}
			tt__counters_repay(c, now.monotonic_ns);
			if (now.monotonic_ns - c->since_ns < youngest_ns)
				youngest_ns = now.monotonic_ns - c->since_ns;
			watching = 1;
			due = 0;
		} else if (!c->watched) {
			/* (outside every scope: no scope of it to leave unread, which past the
			 * budget keeps its looks from backing off) */
			unmarked += !c->unread && !tt__scopes_outside(&c->scopes);
			unwatched++;
		}
		/* Its scopes not known (its records not followed, then or now) and it recorded
		 * since its last reading taken blind: read blind, its scopes whatever they are
		 * (outside recheck r42 N4: xz's workers, their records past the share for 15 s
		 * of 25, a long scope of short calls never read, its last record never old).
		 * While its records are not followed, each TT__COUNTERS_BLIND_NS: a scope it
		 * opens then is not seen, its start bounded by these alone; while they are, its
		 * scopes opened since are known, and those it had open before (their start
		 * read blind) need the pace of a watched one, and a reading as one ends: an end
		 * its records followed find nothing to close. */
		int ended = c->scopes.machine.unmatched != c->unmatched_seen;
		c->unmatched_seen = c->scopes.machine.unmatched;
		if (c->unfollowed && !c->watched && !read && last > c->blind_tsc) {
			int64_t pace_ns = follow || !blind_room ? TT__COUNTERS_BETWEEN_NS : TT__COUNTERS_BLIND_NS;
			/* (charged to the records' share they stand in for, not the budget: they
			 * had spent it, and the spikes' watches found it spent (outside tester r49
			 * F3); past that share, at its pace only a thread that filled a chunk since:
			 * one recording hard, not each of many that record a little; those at the
			 * slowest looks' pace, not woken for, as a long scope past the budget is (a
			 * thread of 1 ms calls in a scope of 1 s, read blind once 30 ms into it and
			 * not again, had its 50 ms scopes inside unsplit, the spike saying it was
			 * read each 2 to 8 ms) */
			const struct tt__chunk *chunk = __atomic_load_n(&slot->current, __ATOMIC_ACQUIRE);
			int slow = !blind_room && chunk == c->blind_chunk;
			pace_ns = slow ? TT__COUNTERS_OVER_BUDGET_MAX_NS : pace_ns;
			if (ended || now.monotonic_ns - c->blind_ns >= pace_ns) {
				c->blind_ns = now.monotonic_ns; /* (read after the walk: below) */
				c->blind_tsc = now.tsc;
				c->blind_chunk = chunk;
				blind_due = 1;
				read = 1;
			}
			pace_ns -= now.monotonic_ns - c->blind_ns;
			/* (the slow ones at the looks that come anyway: not woken for) */
			blind_wait_ns = !slow && pace_ns < blind_wait_ns ? pace_ns : blind_wait_ns;
			woken = !slow && pace_ns <= TT__COUNTERS_BLIND_NS; /* (a look within that, woken for) */
		}
		if (!due && !c->watched && tt__scopes_outside(&c->scopes) && last) {
			/* (read after its last record: its next scope's start is bounded now) */
			int read_since = tt__counters_read_since(c, last, &now, hz);
			if (read_since || now.tsc - last >= after_ticks) {
				quiet++;
				unread_since += !read_since;
				newest = last > newest ? last : newest;
			}
		}
		if (!due) {
			/* (the next scope's first reading; past the budget, none is) */
			if (next && !over_budget && !(woken && next == last) && now.tsc < next + after_ticks) {
				int64_t soon = tt__counters_ns(next + after_ticks - now.tsc, hz);
				due_ns = soon < due_ns ? soon : due_ns;
			}
			continue;
		}
		if (instead) {
			c->instead_ns = c->blind_ns = now.monotonic_ns;
			c->blind_tsc = now.tsc;
		} else if (over_budget && !resume) { /* (its first reading is not taken: counted once, when due) */
			if (open != long_open && now.tsc - open >= after_ticks && c->unread_scope != open) {
				c->unread_scope = open;
				c->unread++;
				__atomic_add_fetch(&tt__counters_unread, 1, __ATOMIC_RELAXED);
			}
			if (!long_open)
				continue;
			open = long_open;
		}
		/* Held to the budget scope by scope (above): one look may find dozens due (64
		 * threads napping), each a reading now and more to its end, which took
		 * tt-sched's CPU time for the counters to twice its budget and more. */
		if (c->unread_scope == open && c->unread > c->unread_written) { /* (read after all: not unread) */
			c->unread--;
			__atomic_sub_fetch(&tt__counters_unread, 1, __ATOMIC_RELAXED);
		}
		unwatched -= !c->watched;
		watching = 1;
		tt__counters_watches += !resume;
		c->watched = open;
		c->outer = c->outer ? c->outer : open;
		c->since_ns = now.monotonic_ns - tt__counters_ns(now.tsc - open, hz);
		/* (its last record standing in: a spike once that long where it opened a scope) */
		c->inside = !tt__scopes_open(&c->scopes, open) && open == last && (instead || tt__counters_inside(slot));
		c->open_seen_ns = tt__scopes_open(&c->scopes, open) || c->inside ? now.monotonic_ns : c->since_ns;
		/* Its first reading: one taken since the scope opened where there is (the
		 * reading after the last watched scope's end, the thread in the next one by
		 * then), else one now: a thread whose scopes follow one another is read once a
		 * scope, not twice (outside recheck r47 F10: 64 threads asleep in scopes one
		 * after another); a scope around one that ended, watched again, from this
		 * look's (the readings since it opened were the inner watch's) */
		uint32_t first = c->n - (uint32_t)(resume && read && c->n);
		while (!resume && first > 0 && c->at[first - 1].ns > c->since_ns)
			first--;
		c->watch_from = c->base + first;
		c->repaid = 0;
		c->on_room = alone && tt__counters_on_room;
		if (now.monotonic_ns - c->since_ns < youngest_ns)
			youngest_ns = now.monotonic_ns - c->since_ns;
		int64_t open_ns = now.monotonic_ns - c->since_ns;
		c->next_ns = now.monotonic_ns + (open_ns / 4 > TT__COUNTERS_BETWEEN_NS ? open_ns / 4 : TT__COUNTERS_BETWEEN_NS);
		if (first == c->n)
			tt__counters_read(slot);
	}
	/* The blind readings due, together: their CPU time the records' share's (one
	 * clock reading before them and one after, not two each), the look's before them
	 * the budget's. A thread whose watch began at this look has its first reading for
	 * one. */
	if (blind_due) {
		int64_t from_ns = tt_os_thread_cpu_ns();
		for (uint32_t i = 0; i < tt__counters_listed; i++) {
			struct tt__slot *slot = tt__counters_list[i];
			struct tt__counters *c = &slot->sched.counters;
			if (c->blind_ns != now.monotonic_ns || c->instead_ns == now.monotonic_ns ||
			    !tt__counters_read_for(slot) || (c->n && c->at[c->n - 1].ns >= now.monotonic_ns))
				continue;
			tt__counters_read(slot);
			tt__counters_blind++;
		}
		int64_t to_ns = tt_os_thread_cpu_ns();
		tt__counters_charge(from_ns - tt__counters_looked_ns);
		tt__counters_blind_spend(to_ns - from_ns);
		tt__counters_looked_ns = to_ns;
	}
	/* Every thread quiet outside its scopes: each read once (unless it was since its
	 * last record), where the quiet has lasted long enough for the looks it spares to
	 * pay for the readings (one a thread, a look's cost in four); then its looks rest. */
	int rest = !watching && quiet == reads && reads && !followed && blind_wait_ns == INT64_MAX && due_ns == INT64_MAX;
	if (rest && unread_since) {
		rest = !over_budget && now.tsc - newest >= after_ticks + after_ticks * (uint64_t)unread_since / 4;
		for (uint32_t i = 0; rest && i < tt__counters_listed; i++) {
			struct tt__slot *slot = tt__counters_list[i];
			uint64_t last = tt__counters_last(slot, now.tsc);
			if (tt__counters_read_for(slot) && !tt__counters_read_since(&slot->sched.counters, last, &now, hz))
				tt__counters_read(slot);
		}
	}
	tt__counters_past = over_budget;
	tt__sched_unlock_held_signals();
	/* The next look: soon enough to see a watched scope end (its reading after:
	 * TT__COUNTERS_END_SHARE), and each first reading due when it is due. A scope that
	 * opens after this look is seen at the next one before it is TT__COUNTERS_AFTER_NS
	 * old: with nothing watched, the looks come no oftener than that (a third fewer). */
	int64_t wait_ns = period_ns > TT__COUNTERS_AFTER_NS ? period_ns : TT__COUNTERS_AFTER_NS;
	if (watching) {
		int64_t end_ns = youngest_ns / TT__COUNTERS_END_SHARE;
		end_ns = end_ns < TT__COUNTERS_END_MAX_NS ? end_ns : TT__COUNTERS_END_MAX_NS;
		end_ns = end_ns > period_ns ? end_ns : period_ns;
		/* (past its budget, a thread outside a watched scope is not read when it opens
		 * one: only those watched need the looks, which kept it past its budget) */
		wait_ns = !unwatched || over_budget || end_ns < wait_ns ? end_ns : wait_ns;
	}
	/* Every thread it reads outside every scope, read since its last record, nothing
	 * recorded since the last look: the next look is half as far off as the program has
	 * been quiet, up to TT__COUNTERS_QUIET_MAX_NS (a scope that opens meanwhile is seen
	 * later, its start bounded by that reading, as near as what its thread did since;
	 * each 4 then 8 ms from the first quiet look, a program's first scope after a
	 * barrier's few ms was read only after its end). */
	if (rest) {
		int64_t half_ns = tt__counters_ns(now.tsc - newest, hz) / 2;
		wait_ns = half_ns < wait_ns ? wait_ns : half_ns < TT__COUNTERS_QUIET_MAX_NS ? half_ns
			: TT__COUNTERS_QUIET_MAX_NS;
	}
	__atomic_store_n(&tt__counters_resting, rest, __ATOMIC_RELAXED);
	if (over_budget && !watching) { /* (nothing to read: only its share to look at again) */
		int64_t slower = 2 * tt__counters_over_wait_ns;
		tt__counters_over_wait_ns = unmarked || !slower ? TT__COUNTERS_OVER_BUDGET_NS
					  : slower < TT__COUNTERS_OVER_BUDGET_MAX_NS ? slower : TT__COUNTERS_OVER_BUDGET_MAX_NS;
		wait_ns = tt__counters_over_wait_ns;
	} else {
		tt__counters_over_wait_ns = 0;
	}
	tt__counters_watching = watching;
	/* (a look woken for a blind reading alone: its wake-up, and what this one costs
	 * after its blind readings, the records' share's) */
	tt__counters_woke_blind = blind_wait_ns < wait_ns && due_ns >= blind_wait_ns;
	if (tt__counters_woke_blind && !blind_due && tt__counters_kept != kept_before) {
		/* (this look's readings the budget's, before the wake-up: its clock read here) */
		int64_t end_ns = tt_os_thread_cpu_ns();
		tt__counters_charge(end_ns - tt__counters_looked_ns);
		tt__counters_looked_ns = end_ns;
	}
	if (blind_wait_ns < wait_ns) /* (one look more than it needs at most: not woken for) */
		wait_ns = blind_wait_ns > period_ns ? blind_wait_ns : period_ns;
	/* Beside the switches, nothing watched and no reading due but those of threads whose
	 * last record will stand in for a scope once it is old enough: the next look comes
	 * with the next drain, not as one turns TT__COUNTERS_AFTER_NS old (each a wake-up,
	 * 25 to 45 us of tt-sched's CPU time on this VM: sched_overhead_pct's two threads
	 * passing a byte back and forth, each recording every hop, woke it each 2 ms, 1,606
	 * times in a run, 496 with this). Such a scope's first reading comes up to a drain
	 * later: the switches split it, its waits for a CPU after wake-ups bounded from then on. */
	if (switched && reads && !watching && blind_wait_ns == INT64_MAX)
		return wait_ns > TT__COUNTERS_SWITCHED_NS ? wait_ns : TT__COUNTERS_SWITCHED_NS;
	if (due_ns < wait_ns)
		wait_ns = due_ns > TT__COUNTERS_NEAR_NS ? due_ns : TT__COUNTERS_NEAR_NS;
	return wait_ns;
}

void tt__counters_forget(struct tt__counters *c, int ours)
{
	if (ours) { /* (a fork's child lists its threads again: tt__counters_after_fork) */
		tt__counters_unlist(c);
		if (tt__counters_list_from && &tt__counters_list_from->sched.counters == c)
			tt__counters_list_from = NULL; /* (recycled: its next is no longer the registry's) */
	}
	/* (past what the list holds, they stay open: in tt-sched's table, out of the program's way) */
	if (ours && c->files.tid && tt__counters_closing < TT__COUNTERS_TO_CLOSE)
		tt__counters_to_close[tt__counters_closing++] = c->files;
	if (c->at)
		tt__counters_free(c->at, c->cap);
	*c = (struct tt__counters){.files = {.handle = -1, .stat = -1, .dir = -1}};
	c->scopes.partial = !ours; /* (a fork's child: the scopes its thread began in the parent) */
}

void tt__counters_sections(struct tt__slot *slot, uint64_t *at, tt__counters_fn fn, void *ctx)
{
	struct tt__counters *c = &slot->sched.counters;
	tt__counters_early(c);
	uint64_t from = *at > c->base ? *at - c->base : 0;
	/* (a thread with no reading new but scopes left unread since: a section of none,
	 * which says them; and one whose states are its counters alone, none read yet: a
	 * section of none, which says they were its source, so that its spikes say why
	 * they have no split, not why it has no switches) */
	int source_unread = tt__counters_on && !slot->sched.on && !c->written && !c->base && !c->n;
	if (from < c->n || c->unread > c->unread_written || source_unread)
		fn(ctx, slot, from ? 0 : c->lost, c->at ? c->at + from : NULL, from < c->n ? c->n - from : 0);
	*at = c->base + c->n;
}

uint32_t tt__counters_flags(const struct tt__slot *slot, const struct tt_schedstat_sample *readings, size_t n)
{
	const struct tt__counters *c = &slot->sched.counters;
	uint32_t own = 0;
	for (size_t k = 0; n && k < 2; k++) {
		int64_t ns = readings[k ? n - 1 : 0].ns;
		if (ns && (ns == c->own_first_ns || ns == c->own_last_ns))
			own |= k ? TT_SCHEDSTAT_OWN_LAST : TT_SCHEDSTAT_OWN_FIRST;
	}
	return tt_os_counters_flags() | (tt__counters_steal ? TT_SCHEDSTAT_STEAL : 0) | (c->unread ? TT_SCHEDSTAT_BUDGET : 0) |
	       (c->unfollowed ? TT_SCHEDSTAT_BLIND : 0) | own;
}

void tt__counters_written(struct tt__slot *slot)
{
	struct tt__counters *c = &slot->sched.counters;
	c->base += c->n;
	c->n = 0;
	c->lost = 0;
	c->unread_written = c->unread;
	c->written = 1;
}

void tt__counters_read_new(struct tt__slot *slot, int read, uint64_t *at, tt__counters_fn fn, void *ctx)
{
	struct tt_os_signals old;
	tt__sched_lock(&old);
	if (read && tt__counters_read_for(slot))
		tt__counters_read_here(slot, slot->tid == tt_os_thread_id());
	tt__counters_sections(slot, at, fn, ctx);
	tt__sched_unlock(&old);
}
