//go:build !purego

#include "textflag.h"

DATA scanConsts<>+0x00(SB)/8, $0x0a0a0a0a0a0a0a0a
DATA scanConsts<>+0x08(SB)/8, $0x0a0a0a0a0a0a0a0a
DATA scanConsts<>+0x10(SB)/8, $0x0d0d0d0d0d0d0d0d
DATA scanConsts<>+0x18(SB)/8, $0x0d0d0d0d0d0d0d0d
DATA scanConsts<>+0x20(SB)/8, $0x3a3a3a3a3a3a3a3a
DATA scanConsts<>+0x28(SB)/8, $0x3a3a3a3a3a3a3a3a
DATA scanConsts<>+0x30(SB)/8, $0x2020202020202020
DATA scanConsts<>+0x38(SB)/8, $0x2020202020202020
DATA scanConsts<>+0x40(SB)/8, $0x7f7f7f7f7f7f7f7f
DATA scanConsts<>+0x48(SB)/8, $0x7f7f7f7f7f7f7f7f
GLOBL scanConsts<>(SB), RODATA|NOPTR, $0x50

// Masks of the 16 bytes in X0: AX the LFs, R13 the CRs, DX the bytes that
// end a header name (':', and anything but printable ASCII other than
// space).
#define MASKS \
	MOVOU X0, X1; PCMPEQB X8, X1; PMOVMSKB X1, AX; \
	MOVOU X0, X2; PCMPEQB X9, X2; PMOVMSKB X2, R13; \
	MOVOU X0, X3; PCMPEQB X10, X3; PMOVMSKB X3, DX; \
	MOVOU X0, X4; PCMPGTB X11, X4; \
	MOVOU X12, X5; PCMPGTB X0, X5; \
	PAND X5, X4; PMOVMSKB X4, CX; \
	NOTL CX; ORL CX, DX; ANDL $0xffff, DX

// CHECKLINE jumps to done unless the line from R8 to R13, whose LF is at
// CX, is within the limit and is followed by a line that does not
// continue it. It uses R14.
#define CHECKLINE(done) \
	MOVQ R13, R14; SUBQ R8, R14; CMPQ R14, maxLine+32(FP); JGT done; \
	LEAQ 1(CX), R14; CMPQ R14, BX; JAE done; \
	MOVBLZX (SI)(R14*1), R14; CMPB R14, $0x20; JEQ done; CMPB R14, $0x09; JEQ done

// func scanHeadSSE2(b []byte, out *[scanLines]uint64, maxLine int) (n int)
//
// scanHeadSSE2 is scanHeadGeneric for b of 16 bytes or more.
//
// Registers: SI the data, BX its length, DI the offset of the block, R8 the
// start of the current line, R9 the end of its name (-1: not yet seen),
// R10 the lines found, R11 out, R12 the first lone CR (BX: none seen); R13
// and R14 are scratch.
TEXT ·scanHeadSSE2(SB), NOSPLIT, $0-48
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), BX
	MOVQ out+24(FP), R11
	XORQ R10, R10
	XORQ R8, R8
	MOVQ $-1, R9
	MOVQ BX, R12
	XORQ DI, DI
	MOVOU scanConsts<>+0x00(SB), X8
	MOVOU scanConsts<>+0x10(SB), X9
	MOVOU scanConsts<>+0x20(SB), X10
	MOVOU scanConsts<>+0x30(SB), X11
	MOVOU scanConsts<>+0x40(SB), X12

block:
	LEAQ  16(DI), CX
	CMPQ  CX, BX
	JA    tail
	MOVOU (SI)(DI*1), X0
	MASKS

	// Lone CRs: CRs not followed by an LF. The byte after the block
	// decides for the last one.
	MOVL AX, CX
	SHRL $1, CX
	NOTL CX
	ANDL CX, R13
	TESTL $0x8000, R13
	JZ    lone
	LEAQ  16(DI), CX
	CMPQ  CX, BX
	JAE   lone
	CMPB  (SI)(CX*1), $0x0a
	JNE   lone
	ANDL  $0x7fff, R13
	JMP   lone

tail:
	// Fewer than 16 bytes are left: read the last 16 and drop the bits of
	// those already seen. A CR at the very end counts as lone: what
	// follows it is unknown.
	CMPQ  DI, BX
	JAE   done
	MOVOU -16(SI)(BX*1), X0
	MASKS
	MOVQ DI, CX
	SUBQ BX, CX
	ADDQ $16, CX
	SHRL CX, AX
	SHRL CX, R13
	SHRL CX, DX
	MOVL AX, CX
	SHRL $1, CX
	NOTL CX
	ANDL CX, R13

lone:
	TESTL R13, R13
	JZ    name
	CMPQ  R12, BX
	JNE   name
	BSFL  R13, R12
	ADDQ  DI, R12

name:
	// The end of the current line's name, if this block holds it.
	TESTQ R9, R9
	JNS   lfloop
	BSFL  DX, R9
	JZ    noname
	ADDQ  DI, R9
	JMP   lfloop

noname:
	MOVQ $-1, R9

lfloop:
	TESTL AX, AX
	JZ    next
	BSFL  AX, CX
	ADDQ  DI, CX // the LF
	CMPQ  R12, CX
	JB    done   // a lone CR lies in this line
	MOVBLZX (SI)(R8*1), R14
	CMPB  R14, $0x20
	JEQ   done   // a continuation line: the general path decides
	CMPB  R14, $0x09
	JEQ   done
	TESTB R14, R14
	JEQ   done   // a NUL line
	MOVQ  CX, R13 // the line's end
	XORL  R14, R14
	CMPQ  CX, R8
	JEQ   emit   // an empty line (LF)
	CMPB  -1(SI)(CX*1), $0x0d
	JNE   lfonly
	DECQ  R13
	CMPQ  R13, R8
	JEQ   crlf   // an empty line (CR LF)
	CHECKLINE(done)

crlf:
	MOVL  $1, R14
	JMP   emit

lfonly:
	CHECKLINE(done)
	XORL  R14, R14

emit:
	// out[n] = end | name<<32 | crlf<<63
	MOVQ R13, (R11)(R10*8)
	SHLQ $63, R14
	ORQ  R14, (R11)(R10*8)
	MOVQ R9, R14
	SHLQ $32, R14
	ORQ  R14, (R11)(R10*8)
	INCQ R10
	CMPQ R13, R8
	JEQ  done    // the empty line ends the head
	LEAQ 1(CX), R8
	CMPQ R10, $32
	JEQ  done

	// Drop this LF, and the name-end bits up to it; the next line's name
	// ends at the next of those, if any is left in the block.
	MOVL AX, R13
	NEGL R13
	ANDL AX, R13 // the LF's bit
	XORL R13, AX
	LEAL -1(R13)(R13*1), R13
	NOTL R13
	ANDL R13, DX
	BSFL DX, R9
	JZ   noname2
	ADDQ DI, R9
	JMP  lfloop

noname2:
	MOVQ $-1, R9
	JMP  lfloop

next:
	ADDQ $16, DI
	JMP  block

done:
	MOVQ R10, n+40(FP)
	RET

DATA scanConsts32<>+0x00(SB)/8, $0x0a0a0a0a0a0a0a0a
DATA scanConsts32<>+0x08(SB)/8, $0x0d0d0d0d0d0d0d0d
DATA scanConsts32<>+0x10(SB)/8, $0x3a3a3a3a3a3a3a3a
DATA scanConsts32<>+0x18(SB)/8, $0x2020202020202020
DATA scanConsts32<>+0x20(SB)/8, $0x7f7f7f7f7f7f7f7f
GLOBL scanConsts32<>(SB), RODATA|NOPTR, $0x28

// The masks of MASKS for the 32 bytes in Y0.
#define MASKS32 \
	VPCMPEQB Y8, Y0, Y1; VPMOVMSKB Y1, AX; \
	VPCMPEQB Y9, Y0, Y2; VPMOVMSKB Y2, R13; \
	VPCMPEQB Y10, Y0, Y3; \
	VPCMPGTB Y11, Y0, Y4; \
	VPCMPGTB Y0, Y12, Y5; \
	VPAND Y5, Y4, Y4; VPANDN Y4, Y3, Y4; VPMOVMSKB Y4, DX; \
	NOTL DX

// func scanHeadAVX2(b []byte, out *[scanLines]uint64, maxLine int) (n int)
//
// scanHeadAVX2 is scanHeadSSE2 32 bytes at a time, for b of 32 bytes or
// more.
TEXT ·scanHeadAVX2(SB), NOSPLIT, $0-48
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), BX
	MOVQ out+24(FP), R11
	XORQ R10, R10
	XORQ R8, R8
	MOVQ $-1, R9
	MOVQ BX, R12
	XORQ DI, DI
	VPBROADCASTB scanConsts32<>+0x00(SB), Y8
	VPBROADCASTB scanConsts32<>+0x08(SB), Y9
	VPBROADCASTB scanConsts32<>+0x10(SB), Y10
	VPBROADCASTB scanConsts32<>+0x18(SB), Y11
	VPBROADCASTB scanConsts32<>+0x20(SB), Y12

block32:
	LEAQ    32(DI), CX
	CMPQ    CX, BX
	JA      tail32
	VMOVDQU (SI)(DI*1), Y0
	MASKS32
	MOVL    AX, CX
	SHRL    $1, CX
	NOTL    CX
	ANDL    CX, R13
	BTL     $31, R13
	JCC     lone32
	LEAQ    32(DI), CX
	CMPQ    CX, BX
	JAE     lone32
	CMPB    (SI)(CX*1), $0x0a
	JNE     lone32
	BTRL    $31, R13
	JMP     lone32

tail32:
	CMPQ    DI, BX
	JAE     done32
	VMOVDQU -32(SI)(BX*1), Y0
	MASKS32
	MOVQ    DI, CX
	SUBQ    BX, CX
	ADDQ    $32, CX
	SHRL    CX, AX
	SHRL    CX, R13
	SHRL    CX, DX
	MOVL    AX, CX
	SHRL    $1, CX
	NOTL    CX
	ANDL    CX, R13

lone32:
	TESTL R13, R13
	JZ    name32
	CMPQ  R12, BX
	JNE   name32
	BSFL  R13, R12
	ADDQ  DI, R12

name32:
	TESTQ R9, R9
	JNS   lfloop32
	BSFL  DX, R9
	JZ    noname32
	ADDQ  DI, R9
	JMP   lfloop32

noname32:
	MOVQ $-1, R9

lfloop32:
	TESTL AX, AX
	JZ    next32
	BSFL  AX, CX
	ADDQ  DI, CX // the LF
	CMPQ  R12, CX
	JB    done32   // a lone CR lies in this line
	MOVBLZX (SI)(R8*1), R14
	CMPB  R14, $0x20
	JEQ   done32   // a continuation line: the general path decides
	CMPB  R14, $0x09
	JEQ   done32
	TESTB R14, R14
	JEQ   done32   // a NUL line
	MOVQ  CX, R13 // the line's end
	XORL  R14, R14
	CMPQ  CX, R8
	JEQ   emit32   // an empty line (LF)
	CMPB  -1(SI)(CX*1), $0x0d
	JNE   lfonly32
	DECQ  R13
	CMPQ  R13, R8
	JEQ   crlf32   // an empty line (CR LF)
	CHECKLINE(done32)

crlf32:
	MOVL  $1, R14
	JMP   emit32

lfonly32:
	CHECKLINE(done32)
	XORL  R14, R14

emit32:
	MOVQ R13, (R11)(R10*8)
	SHLQ $63, R14
	ORQ  R14, (R11)(R10*8)
	MOVQ R9, R14
	SHLQ $32, R14
	ORQ  R14, (R11)(R10*8)
	INCQ R10
	CMPQ R13, R8
	JEQ  done32
	LEAQ 1(CX), R8
	CMPQ R10, $32
	JEQ  done32
	MOVL AX, R13
	NEGL R13
	ANDL AX, R13
	XORL R13, AX
	LEAL -1(R13)(R13*1), R13
	NOTL R13
	ANDL R13, DX
	BSFL DX, R9
	JZ   noname232
	ADDQ DI, R9
	JMP  lfloop32

noname232:
	MOVQ $-1, R9
	JMP  lfloop32

next32:
	ADDQ $32, DI
	JMP  block32

done32:
	VZEROUPPER
	MOVQ R10, n+40(FP)
	RET
