//go:build !purego

#include "textflag.h"

// uriCharsAVX2 is uriCharsGeneric (see there) for b of at least 16 bytes,
// 32 bytes at a time. Each byte is looked up by its low and by its high
// nibble (VPSHUFB): the low nibble's entry has bit h-2 set when the byte
// h<<4 | low is a URI character, for h from 2 to 7; the high nibble's entry
// is that bit (none for other high nibbles). A byte is a URI character when
// the two entries share a bit. The last block overlaps the one before, and
// b of 16 to 31 bytes is read as two halves that overlap.

// Entries of the low nibble (repeated for both lanes), of the high nibble,
// and the nibble mask.
DATA uriLUT<>+0x00(SB)/8, $0x3f3f3f3f3f3e3f2e
DATA uriLUT<>+0x08(SB)/8, $0x1f351f151f3f3f3f
DATA uriLUT<>+0x10(SB)/8, $0x3f3f3f3f3f3e3f2e
DATA uriLUT<>+0x18(SB)/8, $0x1f351f151f3f3f3f
DATA uriLUT<>+0x20(SB)/8, $0x2010080402010000
DATA uriLUT<>+0x28(SB)/8, $0x0000000000000000
DATA uriLUT<>+0x30(SB)/8, $0x2010080402010000
DATA uriLUT<>+0x38(SB)/8, $0x0000000000000000
DATA uriLUT<>+0x40(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA uriLUT<>+0x48(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA uriLUT<>+0x50(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA uriLUT<>+0x58(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL uriLUT<>(SB), RODATA|NOPTR, $0x60

// URICHECK jumps to fail unless every byte of the register R (Y0 or X0)
// is a URI character; T1 to T4 are scratch registers of the same width,
// LO, HI and NIB the tables and the nibble mask, ZERO zero.
#define URICHECK(R, T1, T2, T3, T4, LO, HI, NIB, ZERO) \
	VPSRLW $4, R, T1; \
	VPAND NIB, T1, T1; \
	VPAND NIB, R, T2; \
	VPSHUFB T2, LO, T3; \
	VPSHUFB T1, HI, T4; \
	VPAND T3, T4, T3; \
	VPCMPEQB ZERO, T3, T3; \
	VPMOVMSKB T3, AX; \
	TESTL AX, AX; \
	JNZ fail

// func uriCharsAVX2(b []byte) bool
TEXT ·uriCharsAVX2(SB), NOSPLIT, $0-25
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), BX
	VMOVDQU uriLUT<>+0x00(SB), Y8
	VMOVDQU uriLUT<>+0x20(SB), Y9
	VMOVDQU uriLUT<>+0x40(SB), Y10
	VPXOR Y11, Y11, Y11
	CMPQ BX, $32
	JB   halves
	LEAQ -32(SI)(BX*1), DX

loop:
	CMPQ SI, DX
	JAE  last
	VMOVDQU (SI), Y0
	URICHECK(Y0, Y1, Y2, Y3, Y4, Y8, Y9, Y10, Y11)
	ADDQ $32, SI
	JMP  loop

last:
	VMOVDQU (DX), Y0
	URICHECK(Y0, Y1, Y2, Y3, Y4, Y8, Y9, Y10, Y11)
	JMP ok

halves:
	VMOVDQU (SI), X0
	URICHECK(X0, X1, X2, X3, X4, X8, X9, X10, X11)
	VMOVDQU -16(SI)(BX*1), X0
	URICHECK(X0, X1, X2, X3, X4, X8, X9, X10, X11)

ok:
	VZEROUPPER
	MOVB $1, ret+24(FP)
	RET

fail:
	VZEROUPPER
	MOVB $0, ret+24(FP)
	RET
