; ticktrace hot path: one event = one RDTSC and one 16-byte record (32 bytes for
; events that carry a value) in the calling thread's buffer.
;
; Calling convention (System V x86-64, leaf functions):
;   in:        rdi = payload (a call-site descriptor or function address), or the
;                    value for the flow emitters; rsi = the value for emitters that
;                    carry one.
;   clobbers:  rax rcx rdx rsi rdi r8 r9 r10 and flags (all caller-saved).
;   preserves: everything else; touches no stack, makes no call on the common path.
;
; Thread lookup: the thread pointer %fs:0x10 (glibc's TCB self pointer) is hashed
; with a Fibonacci multiply into tt__tls_table, 65,536 pointers to slots. The slot
; names its owner; an empty entry or another owner (a hash collision, or an entry
; left by an exited thread whose stack was reused) goes to tt__record_slow in C,
; which probes, registers and never lets two threads share a slot.
;
; Reservation: one `xadd` without a lock prefix. It is a single instruction, so a
; signal handler that records on this thread gets its own record wherever it
; interrupts us; only the owning thread writes its cursor. The limit (end of the
; chunk; 0 while recording is off for the thread) is read BEFORE the xadd, and the
; record must lie inside that limit's chunk: a handler that interrupts between the
; two and moves the thread to another chunk must not make a reservation past the end
; of the old chunk pass against the new chunk's limit. Anything else goes to
; tt__record_slow, which switches chunks, applies the overflow policy or undoes it.
;
; RDTSC comes first: an event interrupted by a signal handler keeps the time it
; happened and is placed after the handler's events, whose times stay exact.

default rel

%define TT_KIND_SHIFT      56
%define TT_REC_BEGIN       1
%define TT_REC_END         2
%define TT_REC_ENDBEGIN    3
%define TT_REC_INSTANT     4
%define TT_REC_BEGIN_ARG   5
%define TT_REC_INSTANT_ARG 6
%define TT_REC_COUNTER     7
%define TT_REC_FLOW_OUT    8
%define TT_REC_FLOW_IN     9
%define TT_REC_FUNC_ENTER  10
%define TT_REC_FUNC_EXIT   11
%define TT_REC_VALUE       15

; struct tt__slot (src/internal.h pins these offsets with _Static_assert)
%define SLOT_OWNER  0
%define SLOT_CURSOR 8
%define SLOT_LIMIT  16
%define TT_CHUNK_SIZE   65536	; src/internal.h TT__CHUNK_SIZE
%define TT_CHUNK_HEADER 16	; sizeof(struct tt__chunk)

%define TT_HASH_MULT 0x9E3779B97F4A7C15

; How an emitter builds its record from its arguments.
%define PAYLOAD_RDI     1 ; word = kind | rdi                  (one record)
%define PAYLOAD_NONE    2 ; word = kind                        (one record)
%define PAYLOAD_VALUE   3 ; word = kind | rdi, value = rsi     (two records)
%define VALUE_RDI       4 ; word = kind, value = rdi           (two records)
%define WORD_RDI        5 ; word = rdi, kind included          (one record)

extern tt__tls_table
extern tt__record_slow

section .text

; TT_EMITTER name, kind, how
%macro TT_EMITTER 3
%if %3 == PAYLOAD_VALUE || %3 == VALUE_RDI
%define SIZE 32
%else
%define SIZE 16
%endif
global %1:function (%1.end - %1)
align 32
%1:
	rdtsc
	mov	rcx, [fs:0x10]			; thread pointer: the key and the owner
	shl	rdx, 32
	or	rax, rdx			; rax = tsc
	mov	rdx, TT_HASH_MULT
	imul	rdx, rcx
	shr	rdx, 48				; top 16 bits: the table index
	lea	r9, [tt__tls_table]
	mov	r9, [r9 + rdx * 8]		; the slot, or 0
%if %3 == VALUE_RDI
	mov	rsi, rdi
	mov	rdi, %2 << TT_KIND_SHIFT
%elif %3 == PAYLOAD_NONE
	mov	rdi, %2 << TT_KIND_SHIFT
%elif %3 == WORD_RDI
	; the caller built the word (a one-record kind: the slow path sizes it by kind)
%else
	mov	r8, %2 << TT_KIND_SHIFT
	or	rdi, r8				; rdi = kind | payload
%endif
	test	r9, r9
	jz	.lookup_failed
	cmp	[r9 + SLOT_OWNER], rcx
	jne	.lookup_failed
	mov	r10, [r9 + SLOT_LIMIT]		; the chunk we may write into
	mov	edx, SIZE
	sub	r10, SIZE			; (off the xadd's dependency chain)
	xadd	[r9 + SLOT_CURSOR], rdx		; rdx = where this event goes
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
.lookup_failed:
	; tt__record_slow(word, value, tsc, slot = 0, where = 0)
	xor	ecx, ecx
	xor	r8d, r8d
	mov	rdx, rax
	jmp	tt__record_slow wrt ..plt
.reservation_failed:
	; tt__record_slow(word, value, tsc, slot, where)
	mov	rcx, r9
	mov	r8, rdx
	mov	rdx, rax
	jmp	tt__record_slow wrt ..plt
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
; Notes for the spike detector (TT_THRESHOLD_NS and the like): any one-record kind,
; whose word the header's inline function builds.
TT_EMITTER tt__note,         0,                  WORD_RDI
; -finstrument-functions hooks: (void *fn, void *call_site); the function's address
; is the payload.
TT_EMITTER __cyg_profile_func_enter, TT_REC_FUNC_ENTER, PAYLOAD_RDI
TT_EMITTER __cyg_profile_func_exit,  TT_REC_FUNC_EXIT,  PAYLOAD_RDI

section .note.GNU-stack noalloc noexec nowrite progbits
