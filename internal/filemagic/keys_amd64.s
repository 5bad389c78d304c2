//go:build !purego

#include "textflag.h"

// MASK sets dst to the mask of the bytes of src that are one of the keys
// in Y1 to Y3, using t1 and t2.
#define MASK(src, dst, t1, t2) \
	VPCMPEQB Y1, src, dst; VPCMPEQB Y2, src, t1; VPCMPEQB Y3, src, t2; \
	VPOR dst, t1, dst; VPOR dst, t2, dst

// KEYS broadcasts the three keys at keys into Y1 to Y3.
#define KEYS(keys) \
	VPBROADCASTB 0(keys), Y1; VPBROADCASTB 1(keys), Y2; VPBROADCASTB 2(keys), Y3

// BLOCK sets CX to the mask of the keys in the 32 bytes at DI.
#define BLOCK \
	VMOVDQU (SI)(DI*1), Y0; MASK(Y0, Y5, Y6, Y7); VPMOVMSKB Y5, CX

// TAIL reads the last 32 bytes, at DX, when fewer are left from DI: it
// sets CX to their mask less the hits before DI, which an earlier block
// had, and DI to DX.
#define TAIL \
	VMOVDQU (SI)(DX*1), Y0; MASK(Y0, Y5, Y6, Y7); VPMOVMSKB Y5, R9; \
	MOVQ DI, CX; SUBQ DX, CX; SHRL CX, R9; SHLL CX, R9; MOVL R9, CX; \
	MOVQ DX, DI

// func keyHits(b []byte, from int, keys *[maxFused]byte, out *[keyHitsMax]uint16) (n, next int)
//
// Registers: SI the data, BX its length, DX the start of its last block of
// 32 bytes and R12 of its last 64, DI the bytes at hand, R13 how many
// (64 or 32), CX their mask, R11 out and R10 the hits written.
TEXT ·keyHits(SB), NOSPLIT, $0-64
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), BX
	MOVQ from+24(FP), DI
	MOVQ keys+32(FP), AX
	MOVQ out+40(FP), R11
	KEYS(AX)
	XORQ R10, R10
	LEAQ -32(BX), DX
	LEAQ -64(BX), R12

pair:
	CMPQ DI, R12
	JGT single
	VMOVDQU (SI)(DI*1), Y0
	VMOVDQU 32(SI)(DI*1), Y9
	MASK(Y0, Y5, Y6, Y7)
	MASK(Y9, Y10, Y11, Y12)
	VPOR Y5, Y10, Y11
	VPTEST Y11, Y11
	JNZ pairhits
	ADDQ $64, DI
	JMP pair

pairhits:
	VPMOVMSKB Y5, CX
	VPMOVMSKB Y10, R9
	SHLQ $32, R9
	ORQ R9, CX
	MOVQ $64, R13
	JMP hits

single:
	CMPQ DI, BX
	JAE done
	CMPQ DI, DX
	JA last
	BLOCK
	MOVQ $32, R13
	TESTQ CX, CX
	JNZ hits
	ADDQ $32, DI
	JMP single

last:
	TAIL
	MOVQ $32, R13
	TESTQ CX, CX
	JNZ hits
	ADDQ $32, DI
	JMP done

hits:
	TZCNTQ CX, R8
	ADDQ DI, R8
	MOVW R8, (R11)(R10*2)
	INCQ R10
	BLSRQ CX, CX
	JNZ hits
	ADDQ R13, DI
	CMPQ R10, $64 // keyHitsMax-64: room for the hits of 64 more bytes
	JBE pair

done:
	MOVQ R10, n+48(FP)
	MOVQ DI, next+56(FP)
	VZEROUPPER
	RET

// func firstKey(b []byte, from int, keys *[maxFused]byte) int
//
// Registers as in keyHits.
TEXT ·firstKey(SB), NOSPLIT, $0-48
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), BX
	MOVQ from+24(FP), DI
	MOVQ keys+32(FP), AX
	KEYS(AX)
	LEAQ -32(BX), DX

fblock:
	CMPQ DI, BX
	JAE fnone
	CMPQ DI, DX
	JA flast
	BLOCK
	TESTL CX, CX
	JNZ ffound
	ADDQ $32, DI
	JMP fblock

flast:
	TAIL
	TESTL CX, CX
	JNZ ffound

fnone:
	MOVQ BX, ret+40(FP)
	VZEROUPPER
	RET

ffound:
	TZCNTL CX, R8
	ADDQ DI, R8
	MOVQ R8, ret+40(FP)
	VZEROUPPER
	RET
