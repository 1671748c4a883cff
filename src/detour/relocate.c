/* Moving a function's first instructions into its stub, with Zydis (x86-64 only,
 * allocation-free, and its decoded form gives where each displacement and relative
 * immediate sits in the instruction: exactly what rewriting them needs).
 *
 * What can move: any instruction whose meaning does not depend on where it is, a
 * RIP-relative operand whose target the stub still reaches with 32 bits, a relative
 * jump (rewritten with a 32-bit displacement), and a direct call that is the last of
 * the moved instructions: it becomes a push of its original return address and a
 * jump, so that the callee returns into the function itself, where unwinders (C++
 * exceptions, backtraces) find the function's unwind information, not into the stub,
 * where they find none. What cannot: loop and jrcxz (8-bit displacements only),
 * xbegin, a call followed by more moved instructions, an indirect call, and any
 * function one of whose jumps, or of its cold part's (detour.c), lands inside the bytes
 * the patch overwrites (it would land inside the jump to the stub).
 * A jump that the decoder cannot see (through a jump table) is not checked: no
 * compiler makes one into a function's first five bytes. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "detour.h"

static ZydisDecoder *tt__detour_decoder(void)
{
	static ZydisDecoder decoder;
	static int ready;
	if (!ready) {
		ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
		ready = 1;
	}
	return &decoder;
}

static int tt__detour_decode(const uint8_t *code, uint64_t size, ZydisDecodedInstruction *insn)
{
	ZydisDecoderContext context;
	return ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(tt__detour_decoder(), &context, code, size,
							   insn)) ?
		       0 :
		       -1;
}

/* Where a relative jump or call goes, or where a RIP-relative operand points. */
static uintptr_t tt__detour_target(const ZydisDecodedInstruction *insn, uintptr_t at)
{
	uintptr_t next = at + insn->length;
	if (insn->raw.imm[0].is_relative)
		return next + (uintptr_t)insn->raw.imm[0].value.s;
	return next + (uintptr_t)insn->raw.disp.value;
}

static int tt__detour_is_jump(const ZydisDecodedInstruction *insn)
{
	return insn->raw.imm[0].is_relative && (insn->meta.category == ZYDIS_CATEGORY_COND_BR ||
						insn->meta.category == ZYDIS_CATEGORY_UNCOND_BR);
}

int tt__detour_nops(const uint8_t *code, uint64_t size)
{
	uint64_t at = 0;
	ZydisDecodedInstruction insn;
	while (at < size && tt__detour_decode(code + at, size - at, &insn) == 0 &&
	       insn.mnemonic == ZYDIS_MNEMONIC_NOP)
		at += insn.length;
	return (int)at;
}

int tt__detour_starts_instruction(const uint8_t *code, uint64_t size, uint64_t at)
{
	uint64_t off = 0;
	ZydisDecodedInstruction insn;
	while (off < at && tt__detour_decode(code + off, size - off, &insn) == 0)
		off += insn.length;
	return off == at;
}

int tt__detour_plan(const uint8_t *code, uint64_t size, uintptr_t addr, char *why, size_t cap)
{
	if (size < TT__DETOUR_PATCH) {
		snprintf(why, cap, "%" PRIu64 " %s long, the jump to its trampoline takes %d", size, TT_BYTES(size),
			 TT__DETOUR_PATCH);
		return -1;
	}
	ZydisDecodedInstruction insn;
	uint64_t len = 0;
	while (len < TT__DETOUR_PATCH) {
		if (tt__detour_decode(code + len, size - len, &insn) < 0) {
			snprintf(why, cap, "no instruction can be decoded at +%" PRIu64, len);
			return -1;
		}
		switch (insn.mnemonic) {
		case ZYDIS_MNEMONIC_JCXZ:
		case ZYDIS_MNEMONIC_JECXZ:
		case ZYDIS_MNEMONIC_JRCXZ:
		case ZYDIS_MNEMONIC_LOOP:
		case ZYDIS_MNEMONIC_LOOPE:
		case ZYDIS_MNEMONIC_LOOPNE:
			snprintf(why, cap, "its %s at +%" PRIu64 " has only an 8-bit displacement and "
				 "cannot be moved", ZydisMnemonicGetString(insn.mnemonic), len);
			return -1;
		case ZYDIS_MNEMONIC_XBEGIN:
			snprintf(why, cap, "its xbegin at +%" PRIu64 " cannot be moved", len);
			return -1;
		default: break;
		}
		len += insn.length;
		if (insn.meta.category != ZYDIS_CATEGORY_CALL)
			continue;
		if (!insn.raw.imm[0].is_relative) {
			snprintf(why, cap, "its indirect call at +%" PRIu64 " cannot be moved (its return "
				 "address would be in the trampoline)", len - insn.length);
			return -1;
		}
		if (len < TT__DETOUR_PATCH) {
			snprintf(why, cap, "its call at +%" PRIu64 " would return into the bytes the patch "
				 "overwrites", len - insn.length);
			return -1;
		}
	}
	if (len > size) {
		snprintf(why, cap, "its first instructions (%" PRIu64 " %s) run past its end (%" PRIu64 ")",
			 len, TT_BYTES(len), size);
		return -1;
	}
	return tt__detour_no_jump_into(code, size, addr, NULL, addr, (int)len, why, cap) < 0 ?
		       -1 :
		       (int)len;
}

int tt__detour_no_jump_into(const uint8_t *code, uint64_t size, uintptr_t code_addr,
			    const char *part, uintptr_t addr, int len, char *why, size_t cap)
{
	/* (the function's start is fine: that enters it again, as a call does) */
	ZydisDecodedInstruction insn;
	for (uint64_t at = 0; at < size; at += insn.length) {
		if (tt__detour_decode(code + at, size - at, &insn) < 0) {
			snprintf(why, cap, "no instruction can be decoded at +%" PRIu64 "%s%s (data in "
				 "its code?)", at, part ? " of " : "", part ? part : "");
			return -1;
		}
		if (!tt__detour_is_jump(&insn))
			continue;
		uintptr_t target = tt__detour_target(&insn, code_addr + at);
		if (target > addr && target < addr + (uintptr_t)len) {
			snprintf(why, cap, "the jump at +%" PRIu64 "%s%s goes %sinto the first %d bytes "
				 "(to +%" PRIuPTR "), which the patch overwrites", at, part ? " of " : "",
				 part ? part : "", part ? "" : "back ", len, target - addr);
			return -1;
		}
	}
	return 0;
}

int tt__detour_reach(uintptr_t target, uintptr_t next, int32_t *disp)
{
	int64_t d = (int64_t)(target - next);
	if (d < INT32_MIN || d > INT32_MAX)
		return 0;
	*disp = (int32_t)d;
	return 1;
}

int tt__detour_relocate(const uint8_t *code, uintptr_t addr, int len, uint8_t *out,
			uintptr_t out_addr, size_t cap, char *why, size_t whycap)
{
	size_t n = 0;
	ZydisDecodedInstruction insn;
	int ends = 0; /* the last instruction moved never falls through */
	for (int at = 0; at < len; at += insn.length) {
		if (tt__detour_decode(code + at, (uint64_t)(len - at), &insn) < 0 ||
		    cap - n < (size_t)insn.length + 6) {
			snprintf(why, whycap, "its instruction at +%d cannot be moved", at);
			return -1;
		}
		uintptr_t target = tt__detour_target(&insn, addr + (uintptr_t)at);
		int32_t disp;
		ends = insn.meta.category == ZYDIS_CATEGORY_RET ||
		       insn.meta.category == ZYDIS_CATEGORY_UNCOND_BR;
		if (insn.meta.category == ZYDIS_CATEGORY_CALL) {
			/* the last instruction moved (tt__detour_plan): push the return address
			 * it had (the first byte not overwritten), then jump; the address is
			 * kept after the jump */
			static const uint8_t push_rip_5[6] = {0xff, 0x35, 5, 0, 0, 0};
			uintptr_t ret = addr + (uintptr_t)len;
			if (cap - n < sizeof push_rip_5 + 5 + sizeof ret ||
			    !tt__detour_reach(target, out_addr + n + sizeof push_rip_5 + 5, &disp)) {
				snprintf(why, whycap, "the target of its call at +%d is out of the "
					 "trampoline's 32-bit reach", at);
				return -1;
			}
			memcpy(out + n, push_rip_5, sizeof push_rip_5);
			out[n + 6] = 0xe9;
			memcpy(out + n + 7, &disp, 4);
			memcpy(out + n + 11, &ret, sizeof ret);
			n += sizeof push_rip_5 + 5 + sizeof ret;
			ends = 1;
			continue;
		}
		if (insn.raw.imm[0].is_relative) {
			/* a jump or a conditional jump: written again with rel32 */
			uint8_t op[2];
			int oplen = 1;
			if (insn.meta.category == ZYDIS_CATEGORY_UNCOND_BR)
				op[0] = 0xe9;
			else {
				/* jcc rel8 (70+cc) or rel32 (0f 80+cc) */
				op[0] = 0x0f;
				op[1] = (uint8_t)(0x80 | (insn.opcode & 0x0f));
				oplen = 2;
			}
			uintptr_t next = out_addr + n + (size_t)oplen + 4;
			if (!tt__detour_reach(target, next, &disp)) {
				snprintf(why, whycap, "the target of its jump at +%d is out of the "
					 "trampoline's 32-bit reach", at);
				return -1;
			}
			memcpy(out + n, op, (size_t)oplen);
			memcpy(out + n + (size_t)oplen, &disp, 4);
			n += (size_t)oplen + 4;
			continue;
		}
		memcpy(out + n, code + at, insn.length);
		if (insn.attributes & ZYDIS_ATTRIB_IS_RELATIVE) {
			/* a RIP-relative operand: its displacement is 32 bits */
			if (insn.raw.disp.size != 32 ||
			    !tt__detour_reach(target, out_addr + n + insn.length, &disp)) {
				snprintf(why, whycap, "its RIP-relative operand at +%d cannot be "
					 "rewritten to reach 0x%" PRIxPTR " from the trampoline",
					 at, target);
				return -1;
			}
			memcpy(out + n + insn.raw.disp.offset, &disp, 4);
		}
		n += insn.length;
	}
	if (!ends) {
		int32_t disp;
		if (cap - n < 5 || !tt__detour_reach(addr + (uintptr_t)len, out_addr + n + 5, &disp)) {
			snprintf(why, whycap, "the jump back is out of the trampoline's 32-bit reach");
			return -1;
		}
		out[n] = 0xe9;
		memcpy(out + n + 1, &disp, 4);
		n += 5;
	}
	return (int)n;
}
