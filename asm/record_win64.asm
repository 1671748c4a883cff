; ticktrace hot path for Windows x64: asm/record.asm's emitters in the Microsoft x64
; calling convention. One event = one RDTSC and one 16-byte record (32 bytes for
; events that carry a value) in the calling thread's buffer; the records are the same.
;
; Calling convention (Microsoft x64, leaf functions):
;   in:        rcx = payload (a call-site descriptor or function address), or the
;                    value for the flow emitters; rdx = the value for emitters that
;                    carry one.
;   clobbers:  rax rcx rdx r8 r9 r10 r11 and flags (all volatile in this ABI).
;   preserves: rbx rbp rdi rsi rsp r12-r15 and xmm0-15 (xmm6-15 are the callee's to
;              keep; the common path uses no xmm register at all); touches no stack,
;              not even the caller's 32-byte shadow space, and makes no call on the
;              common path. A leaf that never moves rsp needs no unwind data (.pdata).
;
; Thread lookup: the TEB's self pointer (gs:[0x30], NT_TIB.Self) indexes
; tt__tls_table, 65,536 entries of one cache line each that hold the hot part of a
; thread's state (owner, cursor, limit) inline, exactly as on Linux with the thread
; pointer %fs:0x10 (asm/record.asm says why this shape). The index is bits 12..27 of
; the TEB's address: Windows allocates TEBs on page boundaries, two pages apart on
; x64, so consecutive threads get distinct entries. The entry names its owner; an
; empty entry or another owner goes to the slow path in C, which registers, probes
; and never lets two threads share. A TEB is freed when its thread exits and may be
; reused by the next: the slow path empties the entry of an exiting thread (its fiber
; local storage callback), so a new thread at the same TEB registers anew.
;
; Reservation: one `xadd` without a lock prefix; the limit is read before it and the
; record must lie inside that limit's chunk (asm/record.asm: the same reasoning).
; Tags in the limit's low bits: TT_LIMIT_OFF (tt_pause, tt_disable) returns at once,
; TT_LIMIT_DROP without a chunk (a full buffer, mode stop) fails every reservation,
; so each such event is counted as dropped by the slow path. tt__hot_global.unusual
; is 0 unless recording is off or some entry is tagged: the common path loads only
; the TEB pointer and that word before RDTSC.
;
; The slow path: tt__record_slow_win64(word, value, tsc, entry) in rcx, rdx, r8, r9
; (entry 0: the lookup failed; else the thread's own entry, whose reservation did not
; fit: the cursor moved past it by the event's size). A tail jump with the stack as the
; caller left it (its return address on top, its shadow space above): four arguments,
; no stack argument, as no room for a fifth is ours to write.
;
; Pages: the buffers are 4 KiB pages (large ones need a privilege Wine and most users
; have not; Linux's arena gets 2 MiB ones), so a thread writes a new page every 256
; events, whose address translation missed the TLB and stalled the store: 2 cycles an
; event on average, measured under Wine 8 (KVM, Xeon): per 256-event blocks, median
; 28.3 cycles an event against 26.1 on Linux's huge pages, and 28.0 on Linux with
; huge pages turned off (prctl PR_SET_THP_DISABLE). A prefetch one page ahead of each
; record makes that walk early and off the record's way: 26.2 cycles (1.26 -> 1.17 x
; RDTSC). A prefetch never faults: past the chunk or the arena's end it is dropped.
;
; TICKTRACE_MIN_DUR: __cyg_profile_func_exit (and so _pexit, asm/penter_win64.asm)
; erases a short call with nothing recorded inside (asm/hot.inc TT_FILTER_SHORT), as
; on Linux; the other exits have no table (src/core/registry.c makes it).
;
; Not here yet: the detours' hooks.

default rel

%include "hot.inc"

; How an emitter builds its record from its arguments.
%define PAYLOAD_ARG0    1 ; word = kind | rcx                  (one record)
%define PAYLOAD_NONE    2 ; word = kind                        (one record)
%define PAYLOAD_VALUE   3 ; word = kind | rcx, value = rdx     (two records)
%define VALUE_ARG0      4 ; word = kind, value = rcx           (two records)
%define WORD_ARG0       5 ; word = rcx, kind included          (one record)

extern tt__tls_table
extern tt__hot_global
extern tt__record_slow_win64

section .text

; TT_WORD kind, how: rcx = the record's word (r10 changed)
%macro TT_WORD 2
%if %2 == PAYLOAD_ARG0 || %2 == PAYLOAD_VALUE
	mov	r10, %1 << TT_KIND_SHIFT
	or	rcx, r10
%elif %2 == PAYLOAD_NONE || %2 == VALUE_ARG0
	mov	r10, %1 << TT_KIND_SHIFT
	mov	rcx, r10
%endif
%endmacro

; TT_EMITTER name, kind, how
%macro TT_EMITTER 3
%if %3 == PAYLOAD_VALUE || %3 == VALUE_ARG0
%define SIZE 32
%else
%define SIZE 16
%endif
global %1
align 32
%1:
%if %3 == PAYLOAD_VALUE
	mov	r8, rdx				; r8 = the value (RDTSC writes rdx)
%elif %3 == VALUE_ARG0
	mov	r8, rcx
%endif
	mov	r10, [gs:0x30]			; the TEB's self pointer: the key and the owner
	TT_TABLE_OFFSET r11d, r10d		; r11 = the entry's offset in the table
	lea	r9, [tt__tls_table]
	mov	eax, [tt__hot_global + HOT_UNUSUAL]
	test	eax, eax
	jnz	.unusual			; off, or some thread paused or dropping
.clock:
	rdtsc
	shl	rdx, 32
	or	rax, rdx			; rax = tsc
	mov	rdx, [r9 + r11 + HOT_LIMIT]	; the chunk we may write into
.reserve:
	cmp	[r9 + r11 + HOT_OWNER], r10
	jne	.lookup_failed
	TT_WORD	%2, %3
%if %2 == TT_REC_FUNC_EXIT
	mov	r8, [r9 + r11 + HOT_FILTERS]
	test	r8, r8
	jnz	.filter				; TICKTRACE_MIN_DUR: perhaps a short call
.keep:
%endif
	sub	rdx, SIZE			; (off the xadd's dependency chain)
	mov	r10d, SIZE
	xadd	[r9 + r11 + HOT_CURSOR], r10	; r10 = where this event goes
	sub	rdx, r10			; room left after it; wraps if it is not inside
	cmp	rdx, TT_CHUNK_SIZE - TT_CHUNK_HEADER - SIZE
	ja	.reservation_failed
	mov	[r10], rax
	mov	[r10 + 8], rcx
	prefetchw [r10 + 4096]			; the next page's translation, begun early
%if SIZE == 32
	mov	[r10 + 16], r8
	mov	rdx, TT_REC_VALUE << TT_KIND_SHIFT
	mov	[r10 + 24], rdx
%endif
	ret
%if %2 == TT_REC_FUNC_EXIT
.filter:
	; The filter needs four registers: the entry goes into r9 alone, r11 is 0 after
	; (r9 + r11 the entry again), and the limit is read again, its tag off as
	; .dropping had it (only this thread moves it to another chunk).
	add	r9, r11
	TT_FILTER_SHORT r9, r8, r10, .kept, .erased, rcx, r11, rdx
.kept:
	xor	r11d, r11d
	mov	rdx, [r9 + HOT_LIMIT]
	and	rdx, ~TT_LIMIT_TAGS
	jmp	.keep
.erased:					; a short call, erased
	ret
%endif
.unusual:
	mov	rdx, [r9 + r11 + HOT_LIMIT]
	test	dl, TT_LIMIT_TAGS
	jz	.untagged
	cmp	[r9 + r11 + HOT_OWNER], r10
	jne	.untagged			; another thread's entry: the slow path finds ours
	test	dl, TT_LIMIT_OFF
	jz	.dropping
	ret					; tt_pause, tt_disable
.untagged:
	test	al, TT_HOT_OFF
	jz	.clock				; another thread's state
	ret					; TICKTRACE=0, tt_disable
.dropping:
	; TT_LIMIT_DROP: no time is read; the reservation fails against the tag's chunk
	; (none in mode stop) and the slow path counts the event.
	xor	eax, eax
	and	rdx, ~TT_LIMIT_TAGS
	jmp	.reserve
.lookup_failed:
	; tt__record_slow_win64(word, value, tsc, entry = 0)
	TT_WORD	%2, %3
	mov	rdx, r8
	mov	r8, rax
	xor	r9d, r9d
	jmp	tt__record_slow_win64
.reservation_failed:
	; tt__record_slow_win64(word, value, tsc, entry)
	add	r9, r11
	mov	rdx, r8
	mov	r8, rax
	jmp	tt__record_slow_win64
%undef SIZE
%endmacro

TT_EMITTER tt__begin,        TT_REC_BEGIN,       PAYLOAD_ARG0
TT_EMITTER tt__end,          TT_REC_END,         PAYLOAD_NONE
TT_EMITTER tt__endbegin,     TT_REC_ENDBEGIN,    PAYLOAD_ARG0
TT_EMITTER tt__instant,      TT_REC_INSTANT,     PAYLOAD_ARG0
TT_EMITTER tt__begin_arg,    TT_REC_BEGIN_ARG,   PAYLOAD_VALUE
TT_EMITTER tt__instant_arg,  TT_REC_INSTANT_ARG, PAYLOAD_VALUE
TT_EMITTER tt__counter,      TT_REC_COUNTER,     PAYLOAD_VALUE
TT_EMITTER tt__flow_out,     TT_REC_FLOW_OUT,    VALUE_ARG0
TT_EMITTER tt__flow_in,      TT_REC_FLOW_IN,     VALUE_ARG0
TT_EMITTER tt__frame,        TT_REC_FRAME,       PAYLOAD_ARG0
TT_EMITTER tt__scope_value,  TT_REC_SCOPE_VALUE, VALUE_ARG0
TT_EMITTER tt__note,         0,                  WORD_ARG0
; mingw's -finstrument-functions hooks: (void *fn, void *call_site), called as
; ordinary functions, so the contract above is all they owe the compiler.
TT_EMITTER __cyg_profile_func_enter, TT_REC_FUNC_ENTER, PAYLOAD_ARG0
TT_EMITTER __cyg_profile_func_exit,  TT_REC_FUNC_EXIT,  PAYLOAD_ARG0
