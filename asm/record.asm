; ticktrace hot path: one event = one RDTSC and one 16-byte record (32 bytes for
; events that carry a value) in the calling thread's buffer.
;
; Calling convention (System V x86-64, leaf functions):
;   in:        rdi = payload (a call-site descriptor or function address), or the
;                    value for the flow emitters; rsi = the value for emitters that
;                    carry one.
;   clobbers:  rax rcx rdx rsi rdi r8 r9 r10 r11 and flags (all caller-saved).
;   preserves: everything else; touches no stack, makes no call on the common path.
;
; Thread lookup: the thread pointer %fs:0x10 (glibc's TCB self pointer) indexes
; tt__tls_table, 65,536 entries of one cache line each that hold the hot part of a
; thread's state (owner, cursor, limit) inline: no pointer is loaded between the
; thread pointer and the cursor. The index is bits 12..27 of the thread pointer:
; glibc places thread descriptors at the top of page-aligned stacks, and stacks of
; the usual sizes (8 MiB or any size, plus a guard page) differ in those bits by an
; odd number of pages, so up to 65,536 consecutive threads get distinct entries. The
; entry names its owner; an empty entry or another owner (two live threads alike in
; those bits, or an entry left by an exited thread whose stack was reused) goes to
; tt__record_slow in C, which probes, registers and never lets two threads share.
;
; Reservation: one `xadd` without a lock prefix. It is a single instruction, so a
; signal handler that records on this thread gets its own record wherever it
; interrupts us; only the owning thread writes its cursor. The limit (end of the
; chunk) is read BEFORE the xadd, and the record
; must lie inside that limit's chunk: a handler that interrupts between the two and
; moves the thread to another chunk must not make a reservation past the end of the
; old chunk pass against the new chunk's limit. Anything else goes to
; tt__record_slow, which switches chunks, applies the overflow policy or undoes it.
; A full buffer in mode stop does not come here per event: the slow path gives the
; thread a scratch chunk whose records it counts as dropped when it fills.
;
; Before RDTSC the common path loads only the thread pointer and one global word,
; tt__hot_global.unusual, which is 0 unless recording is off (TICKTRACE=0,
; tt_disable) or some thread's limit is tagged. Tags live in a limit's low bits
; (chunks are 64 KiB-aligned): TT_LIMIT_OFF (tt_pause, tt_disable) returns at once,
; TT_LIMIT_DROP (its buffer is used up, mode stop) writes into the thread's scratch
; chunk without a time, counted by the slow path when it fills. So recording off costs
; no clock read and no call, a dropped event less than a recorded one, and an entry's
; tag is read only while some thread has one. An entry another thread owns (two
; thread pointers alike in the index) is never taken for ours: its tag is not ours.
;
; RDTSC is read before the reservation: an event interrupted by a signal handler
; keeps the time it happened and is placed after the handler's events, whose times
; stay exact.
;
; Why this shape, measured on an Intel Xeon (Sapphire Rapids, KVM, 2026-11) against a
; bare RDTSC in the same run, medians of 21 interleaved rounds (SCHED_FIFO);
; floor = inline rdtsc + 16-byte store into a TLS buffer, 1.09-1.14 x rdtsc:
;   table of pointers to slots, multiply hash, clock first (before)  1.43-1.46 x rdtsc
;   entries inline, multiply hash, clock first                       1.34
;   entries inline, multiply hash, clock after the reservation       1.35-1.36
;   entries inline, 32-bit multiply hash                             1.32
;   entries inline, xor-folded shift index                           1.25
;   entries inline, shift index, clock after the reservation         1.21
;   ... and indexed addressing instead of an add (fewer uops)        1.175-1.21
;   shift index before RDTSC, entry's limit and off byte tested too  1.20-1.23 (before)
;   the same, nothing of the entry loaded before RDTSC               1.16-1.17
;   ... one unused load of the entry (or of the next line) before it  +0.02-0.03
;   ... a load through the thread pointer, of the stack, of %fs:n    +0.00
;   ... `mov r32, [global]` + test before it (chosen)                +0.00
;   ... `cmp byte [global], 0` instead                               +0.02; a byte into r8b +0.07
;   ... `mov rdi, imm64` for the word instead of through r8           +0.03
;   the caller's `call *GOT` or PLT stub instead of `call *reg`      +0.03-0.06
; So RDTSC here waits for the table loads before it, not for branches or ALU work:
; the entry is loaded after it. (The header's macros call the emitters through a
; register for the last line.) On AMD EPYC the same work hid behind RDTSC.

default rel

%include "hot.inc"

; How an emitter builds its record from its arguments.
%define PAYLOAD_RDI     1 ; word = kind | rdi                  (one record)
%define PAYLOAD_NONE    2 ; word = kind                        (one record)
%define PAYLOAD_VALUE   3 ; word = kind | rdi, value = rsi     (two records)
%define VALUE_RDI       4 ; word = kind, value = rdi           (two records)
%define WORD_RDI        5 ; word = rdi, kind included          (one record)

%include "keep_xmm.inc"

extern tt__tls_table
extern tt__hot_global
extern tt__record_slow

section .text

; TT_EMITTER name, kind, how[, slow path]
%macro TT_EMITTER 3-4 tt__record_slow wrt ..plt
%if %3 == PAYLOAD_VALUE || %3 == VALUE_RDI
%define SIZE 32
%else
%define SIZE 16
%endif
global %1:function (%1.end - %1)
align 32
%1:
	mov	rcx, [fs:0x10]			; thread pointer: the key and the owner
	TT_TABLE_OFFSET r11d, ecx		; r11 = the entry's offset in the table
	lea	r9, [tt__tls_table]
	mov	r8d, [tt__hot_global + HOT_UNUSUAL]
	test	r8d, r8d
	jnz	.unusual			; off, or some thread paused or dropping
.clock:
	rdtsc
	shl	rdx, 32
	or	rax, rdx			; rax = tsc
	mov	r10, [r9 + r11 + HOT_LIMIT]	; the chunk we may write into
.reserve:
%if %3 == VALUE_RDI
	mov	rsi, rdi
	mov	r8, %2 << TT_KIND_SHIFT
	mov	rdi, r8
%elif %3 == PAYLOAD_NONE
	mov	r8, %2 << TT_KIND_SHIFT		; (through r8: `mov rdi, imm64` measured
	mov	rdi, r8				; 0.03 x RDTSC slower, whatever the layout)
%elif %3 == WORD_RDI
	; the caller built the word (a one-record kind: the slow path sizes it by kind)
%else
	mov	r8, %2 << TT_KIND_SHIFT
	or	rdi, r8				; rdi = kind | payload
%endif
	cmp	[r9 + r11 + HOT_OWNER], rcx
	jne	.lookup_failed
%if %2 == TT_REC_FUNC_EXIT
	TT_FILTER_SHORT r9 + r11, r8, rsi, .keep, .erased
.keep:
%endif
	mov	edx, SIZE
	sub	r10, SIZE			; (off the xadd's dependency chain)
	xadd	[r9 + r11 + HOT_CURSOR], rdx	; rdx = where this event goes
	sub	r10, rdx			; room left after it; wraps if it is not inside
	cmp	r10, TT_CHUNK_SIZE - TT_CHUNK_HEADER - SIZE
	ja	.reservation_failed
	mov	[rdx], rax
	mov	[rdx + 8], rdi
%if SIZE == 32
	mov	[rdx + 16], rsi
	mov	r8, TT_REC_VALUE << TT_KIND_SHIFT
	mov	[rdx + 24], r8
%endif
	ret
%if %2 == TT_REC_FUNC_EXIT
.erased:					; TICKTRACE_MIN_DUR: a short call, erased
	ret
%endif
.unusual:
	mov	r10, [r9 + r11 + HOT_LIMIT]
	test	r10b, TT_LIMIT_TAGS
	jz	.untagged
	cmp	[r9 + r11 + HOT_OWNER], rcx
	jne	.untagged			; another thread's entry: the slow path finds ours
	test	r10b, TT_LIMIT_OFF
	jz	.dropping
	ret					; tt_pause, tt_disable
.untagged:
	test	r8b, TT_HOT_OFF
	jz	.clock				; another thread's state
	ret					; TICKTRACE=0, tt_disable
.dropping:
	; TT_LIMIT_DROP: the record goes to the thread's scratch chunk, where the slow
	; path counts it by its kind; its time is not kept, so not read.
	xor	eax, eax
	and	r10, ~TT_LIMIT_TAGS
	jmp	.reserve
.lookup_failed:
	; tt__record_slow(word, value, tsc, entry = 0, where = 0)
	xor	ecx, ecx
	xor	r8d, r8d
	mov	rdx, rax
	jmp	%4
.reservation_failed:
	; tt__record_slow(word, value, tsc, entry, where)
	lea	rcx, [r9 + r11]
	mov	r8, rdx
	mov	rdx, rax
	jmp	%4
.end:
%undef SIZE
%endmacro

TT_EMITTER tt__begin,        TT_REC_BEGIN,       PAYLOAD_RDI
TT_EMITTER tt__end,          TT_REC_END,         PAYLOAD_NONE
TT_EMITTER tt__endbegin,     TT_REC_ENDBEGIN,    PAYLOAD_RDI
TT_EMITTER tt__instant,      TT_REC_INSTANT,     PAYLOAD_RDI
TT_EMITTER tt__begin_arg,    TT_REC_BEGIN_ARG,   PAYLOAD_VALUE
TT_EMITTER tt__instant_arg,  TT_REC_INSTANT_ARG, PAYLOAD_VALUE
TT_EMITTER tt__counter,      TT_REC_COUNTER,     PAYLOAD_VALUE
TT_EMITTER tt__flow_out,     TT_REC_FLOW_OUT,    VALUE_RDI
TT_EMITTER tt__flow_in,      TT_REC_FLOW_IN,     VALUE_RDI
TT_EMITTER tt__frame,        TT_REC_FRAME,       PAYLOAD_RDI
TT_EMITTER tt__scope_value,  TT_REC_SCOPE_VALUE, VALUE_RDI
; Notes for the spike detector (TT_THRESHOLD_NS and the like): any one-record kind,
; whose word the header's inline function builds.
TT_EMITTER tt__note,         0,                  WORD_RDI
; -finstrument-functions hooks: (void *fn, void *call_site); the function's address
; is the payload. The compiler calls them as ordinary functions, so the contract above
; is all they owe it: only caller-saved registers change, the stack is not touched.
; They cannot re-enter themselves (the common path makes no call); the slow path they
; may jump to saves and restores errno and drops, counted, an event recorded from
; inside itself (src/core/core.h: tt__in_slow_path).
TT_EMITTER __cyg_profile_func_enter, TT_REC_FUNC_ENTER, PAYLOAD_RDI
TT_EMITTER __cyg_profile_func_exit,  TT_REC_FUNC_EXIT,  PAYLOAD_RDI

; The detours' hooks (src/detour/): the same events, for the trampoline at a patched
; function's entry or return when its inlined copy of the common path cannot write the
; event (another thread's entry, dropping), where every register but the ones above
; may hold the program's values (a caller compiled with GCC's -fipa-ra keeps values in
; caller-saved registers its callee is known not to touch). So their slow path goes
; through tt__record_slow_preserving, which also keeps xmm0-15 and aligns the stack
; for the C slow path.
TT_EMITTER tt__detour_func_enter, TT_REC_FUNC_ENTER, PAYLOAD_RDI, tt__record_slow_preserving
TT_EMITTER tt__detour_func_exit,  TT_REC_FUNC_EXIT,  PAYLOAD_RDI, tt__record_slow_preserving

; tt__record_slow for the detours: entered by the hooks' jmp, or called by the
; trampoline whose reservation did not fit, so [rsp] returns to the trampoline. It
; aligns the stack itself (rbp keeps where it was): a patched function may have been
; entered with rsp 8 bytes off, and KEEP_XMM's movaps and C need it aligned. Keeps
; xmm0-15, which C may use; the emitters' own
; clobbers (rax rcx rdx rsi rdi r8 r9 r10 r11) the trampoline saves. (Not x87 or the
; upper halves of ymm: the slow path uses neither, unless a C library routine it calls
; is an AVX version, whose vzeroupper clears them.)
global tt__record_slow_preserving:function (tt__record_slow_preserving.end - tt__record_slow_preserving)
align 16
tt__record_slow_preserving:
	push	rbp
	mov	rbp, rsp
	and	rsp, -16
	sub	rsp, 256			; 16 xmm registers
	KEEP_XMM store, 0
	call	tt__record_slow wrt ..plt
	KEEP_XMM load, 0
	mov	rsp, rbp
	pop	rbp
	ret
.end:

; Where the table is, for libticktrace-detour's trampolines, which inline the
; emitters' common path (src/detour/trampoline.asm).
section .data.rel.ro
global tt__tls_table_address:data 8
align 8
tt__tls_table_address:
	dq	tt__tls_table

section .note.GNU-stack noalloc noexec nowrite progbits
