; Functions as MSVC compiles them with /Gh /GH: `call _penter` their first instruction,
; `call _pexit` before they return. Each checks that the hooks kept what MSVC's code
; relies on: the arguments in rcx, r8, xmm1 and xmm3 after _penter, the return value in
; rax or xmm0 after _pexit (hooked.c calls them).

default rel

extern _penter
extern _pexit

section .text

; int tt_hooked(int64_t a, double b, int64_t c, double d): 1 when a, b, c and d reached
; it unchanged (0x1111, 2.5, 0x3333, 4.5) through _penter, 2 if not; calls tt_hooked_leaf.
global tt_hooked
tt_hooked:
	call	_penter
	cmp	rcx, 0x1111
	jne	.bad
	cmp	r8, 0x3333
	jne	.bad
	movq	r10, xmm1
	mov	r11, 0x4004000000000000		; 2.5
	cmp	r10, r11
	jne	.bad
	movq	r10, xmm3
	mov	r11, 0x4012000000000000		; 4.5
	cmp	r10, r11
	jne	.bad
	sub	rsp, 40				; (shadow space, aligned)
	call	tt_hooked_leaf
	add	rsp, 40
	mov	eax, 1
	call	_pexit
	ret
.bad:
	mov	eax, 2
	call	_pexit
	ret

global tt_hooked_leaf
tt_hooked_leaf:
	call	_penter
	call	_pexit
	ret

; int64_t tt_hooked_deep(int64_t n): itself nested n calls deep below this one, as MSVC's
; code recurses; n, in rax through _pexit.
global tt_hooked_deep
tt_hooked_deep:
	call	_penter
	push	rcx				; (n, and the frame aligned)
	sub	rsp, 32				; (shadow space)
	test	rcx, rcx
	jz	.leaf
	dec	rcx
	call	tt_hooked_deep
.leaf:
	add	rsp, 32
	pop	rax
	sub	rsp, 8				; (as a frame of MSVC's: aligned at the call)
	call	_pexit
	add	rsp, 8
	ret

; double tt_hooked_half(double x): x / 2, in xmm0 through _pexit.
global tt_hooked_half
tt_hooked_half:
	call	_penter
	mov	rax, 0x3fe0000000000000		; 0.5
	movq	xmm1, rax
	mulsd	xmm0, xmm1
	sub	rsp, 8				; (as a frame of MSVC's: aligned at the call)
	call	_pexit
	add	rsp, 8
	ret
