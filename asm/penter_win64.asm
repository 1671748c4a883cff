; MSVC's function hooks for Windows x64: _penter (/Gh) and _pexit (/GH), the poor man's
; profiler's entry points, recording the same FUNC_ENTER and FUNC_EXIT records as
; -finstrument-functions' hooks (asm/record_win64.asm), through them.
;
; Register contract (what MSVC's code expects of them, unlike an ordinary function):
;   _penter is the first instruction of each function (`call _penter`, 5 bytes), before
;     its prologue: the function's arguments are live in rcx rdx r8 r9 and xmm0-3, rsp is
;     16-byte aligned at its entry. The function is its return address less 5.
;   _pexit is called before each function's epilogue: its return value is live in rax
;     or xmm0; rsp is 8 off 16-byte alignment at its entry.
;   Both keep every register: rax rcx rdx r8-r11 and xmm0-5 (the ABI's volatile ones)
;     saved around the work, the others kept by what they call; flags change. They
;     have a frame (rbp) and unwind data (.pdata/.xdata), so a stack walk or an
;     exception passes through them.
;
; _pexit names the function it leaves from a stack of the functions _penter entered,
; per thread, in the thread's table entry (struct tt__hot's penter_top/end/base,
; src/core/core.h): push and pop without a lock or a call but the recording
; emitter's. A thread's first call, another thread in its entry, and calls nested deeper
; than the stack holds go to C (tt__penter_slow, which grows it: calls nested deeper
; than memory lets it are counted as dropped, neither end recorded; tt__pexit_slow); a
; _pexit without an entry records nothing.

default rel

%include "hot.inc"

%define HOT_PENTER_TOP  40	; src/core/core.h pins these
%define HOT_PENTER_END  48
%define HOT_PENTER_BASE 56

extern tt__tls_table
extern __cyg_profile_func_enter
extern __cyg_profile_func_exit
extern tt__penter_slow
extern tt__pexit_slow

; What a hook keeps: xmm0-5 at [rsp + 32], rax rcx rdx r8 r9 r10 r11 at [rsp + 128],
; above the shadow space of what it calls; rsp aligned whatever it was on entry.
%define SAVE_BYTES (32 + 6 * 16 + 8 * 8)

%macro TT_HOOK_SAVE 0
	push	rbp
	mov	rbp, rsp			; (the prologue .xdata describes: 4 bytes)
	and	rsp, -16
	sub	rsp, SAVE_BYTES
%assign i 0
%rep 6
	movaps	[rsp + 32 + 16 * i], xmm %+ i
%assign i i + 1
%endrep
	mov	[rsp + 128], rax
	mov	[rsp + 136], rcx
	mov	[rsp + 144], rdx
	mov	[rsp + 152], r8
	mov	[rsp + 160], r9
	mov	[rsp + 168], r10
	mov	[rsp + 176], r11
%endmacro

%macro TT_HOOK_RESTORE 0
%assign i 0
%rep 6
	movaps	xmm %+ i, [rsp + 32 + 16 * i]
%assign i i + 1
%endrep
	mov	rax, [rsp + 128]
	mov	rcx, [rsp + 136]
	mov	rdx, [rsp + 144]
	mov	r8, [rsp + 152]
	mov	r9, [rsp + 160]
	mov	r10, [rsp + 168]
	mov	r11, [rsp + 176]
	lea	rsp, [rbp]
	pop	rbp
	ret
%endmacro

; r9 + r11 = the calling thread's table entry; jumps to `mismatch` if not its own
%macro TT_HOOK_ENTRY 1
	mov	r10, [gs:0x30]
	TT_TABLE_OFFSET r11d, r10d
	lea	r9, [tt__tls_table]
	cmp	[r9 + r11 + HOT_OWNER], r10
	jne	%1
%endmacro

section .text

global _penter
align 16
_penter:
	TT_HOOK_SAVE
	mov	rcx, [rbp + 8]			; the return address, 5 bytes into the function
	sub	rcx, 5
	TT_HOOK_ENTRY .slow
	mov	rax, [r9 + r11 + HOT_PENTER_TOP]
	cmp	rax, [r9 + r11 + HOT_PENTER_END]
	jae	.slow				; deeper than the stack holds
	mov	[rax], rcx
	add	rax, 8
	mov	[r9 + r11 + HOT_PENTER_TOP], rax
	call	__cyg_profile_func_enter	; (rcx = the function)
	TT_HOOK_RESTORE
.slow:
	call	tt__penter_slow			; (rcx = the function)
	TT_HOOK_RESTORE
.end:

global _pexit
align 16
_pexit:
	TT_HOOK_SAVE
	TT_HOOK_ENTRY .slow
	mov	rax, [r9 + r11 + HOT_PENTER_TOP]
	cmp	rax, [r9 + r11 + HOT_PENTER_BASE]
	jbe	.slow				; no entry to leave: C says nothing happens
	cmp	rax, [r9 + r11 + HOT_PENTER_END]
	ja	.slow				; deeper than the stack holds
	sub	rax, 8
	mov	[r9 + r11 + HOT_PENTER_TOP], rax
	mov	rcx, [rax]
	call	__cyg_profile_func_exit
	TT_HOOK_RESTORE
.slow:
	call	tt__pexit_slow
	TT_HOOK_RESTORE
.end:

; Unwind data: both hooks' prologue is `push rbp` (offset 1) then `mov rbp, rsp`
; (offset 4), rbp the frame register from there.
section .xdata rdata align=8
tt__hook_unwind:
	db	1				; version 1, no flags
	db	4				; prologue bytes
	db	2				; unwind codes
	db	5				; frame register rbp, offset 0
	db	4, 3				; at 4: UWOP_SET_FPREG
	db	1, 0x50				; at 1: UWOP_PUSH_NONVOL rbp

section .pdata rdata align=4
	dd	_penter wrt ..imagebase, _penter.end wrt ..imagebase, tt__hook_unwind wrt ..imagebase
	dd	_pexit wrt ..imagebase, _pexit.end wrt ..imagebase, tt__hook_unwind wrt ..imagebase
