//go:build !purego

#include "textflag.h"

// Masks of the 16 bytes in X0: AX the LFs, R11 the CRs, DX the bytes that
// end a header name (':', and anything but printable ASCII other than
// space). X8 to X12 hold 16 copies of LF, CR, ':', 0x20 and 0x7f.
#define MASKS \
	MOVOU X0, X1; PCMPEQB X8, X1; PMOVMSKB X1, AX; \
	MOVOU X0, X2; PCMPEQB X9, X2; PMOVMSKB X2, R11; \
	MOVOU X0, X3; PCMPEQB X10, X3; PMOVMSKB X3, DX; \
	MOVOU X0, X4; PCMPGTB X11, X4; \
	MOVOU X12, X5; PCMPGTB X0, X5; \
	PAND X5, X4; PMOVMSKB X4, R12; \
	NOTL R12; ORL R12, DX; ANDL $0xffff, DX

#define SPLAT(c, x) MOVQ c, AX; MOVQ AX, x; PUNPCKLQDQ x, x

// func scanLine(b []byte) (lf, cr, name int)
TEXT ·scanLine(SB), NOSPLIT, $0-48
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), BX
	MOVQ $-1, R8 // name
	MOVQ $-1, R9 // cr
	XORQ DI, DI  // offset of the block
	CMPQ BX, $16
	JLT  small
	SPLAT($0x0a0a0a0a0a0a0a0a, X8)
	SPLAT($0x0d0d0d0d0d0d0d0d, X9)
	SPLAT($0x3a3a3a3a3a3a3a3a, X10)
	SPLAT($0x2020202020202020, X11)
	SPLAT($0x7f7f7f7f7f7f7f7f, X12)
	LEAQ -16(BX), R10 // offset of the last whole block

loop:
	CMPQ  DI, R10
	JA    tail
	MOVOU (SI)(DI*1), X0
	MASKS

block:
	// Keep the bits of the bytes before the first LF.
	MOVL AX, R13
	NEGL R13
	ANDL AX, R13
	DECL R13
	ANDL R13, R11
	ANDL R13, DX
	TESTQ R8, R8
	JNS   havename
	BSFL  DX, R12
	JZ    havename
	LEAQ  (DI)(R12*1), R8

havename:
	TESTQ R9, R9
	JNS   havecr
	BSFL  R11, R12
	JZ    havecr
	LEAQ  (DI)(R12*1), R9

havecr:
	TESTL AX, AX
	JNZ   found
	ADDQ  $16, DI
	CMPQ  DI, BX
	JAE   nolf
	JMP   loop

tail:
	// Fewer than 16 bytes are left: read the last 16 and drop the bits of
	// those already seen.
	MOVOU (SI)(R10*1), X0
	MASKS
	MOVQ DI, CX
	SUBQ R10, CX
	SHRL CX, AX
	SHRL CX, R11
	SHRL CX, DX
	JMP  block

found:
	BSFL AX, AX
	ADDQ DI, AX
	MOVQ AX, lf+24(FP)
	MOVQ R9, cr+32(FP)
	MOVQ R8, name+40(FP)
	RET

nolf:
	MOVQ $-1, lf+24(FP)
	MOVQ R9, cr+32(FP)
	MOVQ R8, name+40(FP)
	RET

small:
	// Fewer than 16 bytes in all: one at a time.
	CMPQ    DI, BX
	JAE     nolf
	MOVBLZX (SI)(DI*1), AX
	CMPB    AL, $0x0a
	JEQ     smallfound
	TESTQ   R9, R9
	JNS     smallname
	CMPB    AL, $0x0d
	JNE     smallname
	MOVQ    DI, R9

smallname:
	TESTQ R8, R8
	JNS   smallnext
	CMPB  AL, $0x3a
	JEQ   smallend
	CMPB  AL, $0x20
	JLS   smallend
	CMPB  AL, $0x7e
	JLS   smallnext

smallend:
	MOVQ DI, R8

smallnext:
	INCQ DI
	JMP  small

smallfound:
	MOVQ DI, lf+24(FP)
	MOVQ R9, cr+32(FP)
	MOVQ R8, name+40(FP)
	RET
