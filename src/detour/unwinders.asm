; What an unwinder's entry point jumps to once detour.c has patched it: the entry
; points of every unwinder the process has (_Unwind_RaiseException, _Unwind_ForcedUnwind,
; _Unwind_Resume_or_Rethrow, _Unwind_Backtrace; libgcc_s's, a copy linked statically
; into the program, LLVM's) are patched like a recorded function, with a stub whose
; entry is tt__detour_unwinding instead of tt__detour_entry.
;
; An unwinder reads the return address of each frame it walks through; a patched
; function's is tt__detour_exit, for which it finds no unwind information, and it
; stops there (a forced unwind then skips every destructor and cleanup below). So
; before any unwinder runs, the thread's replaced return addresses are put back
; (detour.c, tt__detour_put_back_returns); before a forced unwind (pthread_exit,
; pthread_cancel), which ends every call of the thread, their calls end too (the
; stub's word says which). Watching the code, not interposing the
; symbols, is what reaches the unwinders called without the dynamic linker's lookup:
; a static copy's callers, glibc's pthread_exit and pthread_cancel and backtrace(3),
; which find libgcc_s's functions with dlopen and dlsym. (Unwind information for
; tt__detour_exit instead would need the real return address from the thread's
; shadow stack, which a CFA expression cannot reach: no DWARF operation reads %fs.)
;
; Entry: [rsp] is the stub, [rsp + 8] the unwinder's return address. The unwinder
; goes on with every register as at its entry and no frame of ours on the stack
; (the unwinder starts from its own frame; backtrace(3) lists what it finds).

default rel

%define STUB_WORD  8	; struct tt__detour_stub (detour.h): TT__DETOUR_ENDS_CALLS or 0
%define STUB_GO_ON 16

extern tt__detour_put_back_returns

section .text

global tt__detour_unwinding:function (tt__detour_unwinding.end - tt__detour_unwinding) hidden
tt__detour_unwinding:
	push	rbp
	mov	rbp, rsp
	and	rsp, -16			; whatever the caller's alignment
	push	rdi				; the unwinders' arguments: up to six
	push	rsi
	push	rdx
	push	rcx
	push	r8
	push	r9
	mov	rdi, [rbp + 8]			; the stub
	mov	rdi, [rdi + STUB_WORD]
	call	tt__detour_put_back_returns wrt ..plt
	pop	r9
	pop	r8
	pop	rcx
	pop	rdx
	pop	rsi
	pop	rdi
	mov	rsp, rbp
	pop	rbp
	pop	r11				; the stub
	jmp	[r11 + STUB_GO_ON]
.end:

section .note.GNU-stack noalloc noexec nowrite progbits
