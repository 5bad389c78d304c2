//go:build !purego

#include "textflag.h"

// scanHeadSSE2 and scanHeadAVX2 are scanHeadGeneric (see there) for b of at
// least 16 and 32 bytes. They read b a block (16 or 32 bytes) at a time,
// make masks of its LFs, CRs and name-ending bytes, and walk the LFs.
//
// Registers: SI the data, BX its length, DI the offset of the block, R8 the
// start of the current line, R9 the end of its name (-1: not yet seen),
// R10 the lines found, R11 out, R12 the first lone CR (BX: none seen); AX,
// R13 and DX hold the masks of the block (LF, CR, name end), CX the LF at
// hand; R13 and R14 are scratch once the masks are used.

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

// MASKS16 makes the masks of the 16 bytes in X0: AX the LFs, R13 the CRs,
// DX the bytes that end a header name (':', and anything but printable
// ASCII other than space).
#define MASKS16 \
	MOVOU X0, X1; PCMPEQB X8, X1; PMOVMSKB X1, AX; \
	MOVOU X0, X2; PCMPEQB X9, X2; PMOVMSKB X2, R13; \
	MOVOU X0, X3; PCMPEQB X10, X3; PMOVMSKB X3, DX; \
	MOVOU X0, X4; PCMPGTB X11, X4; \
	MOVOU X12, X5; PCMPGTB X0, X5; \
	PAND X5, X4; PMOVMSKB X4, CX; \
	NOTL CX; ORL CX, DX; ANDL $0xffff, DX

// LFCR32 sets lf and cr to the masks of the LFs and CRs of the 32 bytes
// in Y0, using Y1 and Y2.
#define LFCR32(lf, cr) \
	VPCMPEQB Y8, Y0, Y1; VPMOVMSKB Y1, lf; \
	VPCMPEQB Y9, Y0, Y2; VPMOVMSKB Y2, cr

// MASKS32 makes the same masks of the 32 bytes in Y0.
#define MASKS32 \
	LFCR32(AX, R13); \
	VPCMPEQB Y10, Y0, Y3; \
	VPCMPGTB Y11, Y0, Y4; \
	VPCMPGTB Y0, Y12, Y5; \
	VPAND Y5, Y4, Y4; VPANDN Y4, Y3, Y4; VPMOVMSKB Y4, DX; \
	NOTL DX

// LONE keeps in R13 the CRs that no LF follows within the block.
#define LONE \
	MOVL AX, CX; SHRL $1, CX; NOTL CX; ANDL CX, R13

// CHECKLINE jumps to done unless the line from R8 to R13, whose LF is at
// CX, is within the limit and is followed by a line that starts with
// neither white space (which would continue it) nor a NUL byte. It uses
// R14.
#define CHECKLINE(done) \
	MOVQ R13, R14; SUBQ R8, R14; CMPQ R14, maxLine+32(FP); JGT done; \
	LEAQ 1(CX), R14; CMPQ R14, BX; JAE done; \
	MOVBLZX (SI)(R14*1), R14; FIRSTBYTE(done)

// FIRSTBYTE jumps to done if R14 is a space, a tab or a NUL byte: a line
// starting with it is for the general path. A byte above the space, as
// lines nearly always start, takes one test.
#define FIRSTBYTE(done) \
	CMPB R14, $0x20; JHI 7(PC); \
	CMPB R14, $0x20; JEQ done; CMPB R14, $0x09; JEQ done; TESTB R14, R14; JEQ done

// EMIT writes out[R10] = R13 | R9<<32, the line's end and where its name
// ends, and counts it; EMITCR does the same for a line that CR LF ends.
// They use R14.
#define EMIT \
	MOVQ R9, R14; SHLQ $32, R14; ORQ R13, R14; MOVQ R14, (R11)(R10*8); INCQ R10
#define EMITCR \
	MOVQ R9, R14; SHLQ $32, R14; ORQ R13, R14; BTSQ $63, R14; MOVQ R14, (R11)(R10*8); INCQ R10

// DROPLF16 drops the lowest LF from AX, and the name ends up to it from
// DX; it uses R13.
#define DROPLF16 \
	MOVL AX, R13; NEGL R13; ANDL AX, R13; XORL R13, AX; \
	LEAL -1(R13)(R13*1), R13; NOTL R13; ANDL R13, DX

// DROPLF32 is DROPLF16 with BMI1, which the processors with AVX2 have.
#define DROPLF32 \
	BLSMSKL AX, R13; ANDNL DX, R13, DX; BLSRL AX, AX

// WALK walks the LFs of the block in AX (with its name ends in DX) after
// the masks are made: it emits the lines they end, and jumps to next when
// the block is used up, to done when the scan ends. It starts at lfloop
// with the lowest LF's offset in the block in CX, which firstlf (FIRSTLF16
// or FIRSTLF32) finds. droplf is DROPLF16 or DROPLF32. The lines that CR
// LF ends, most of them, take the path without jumps.
#define WALK(lfloop, firstlf, lfonly, emitted, empty, emptycr, noname, next, done, droplf) \
lfloop: \
	firstlf(next); ADDQ DI, CX; \
	CMPQ R12, CX; JB done; \
	MOVQ CX, R13; \
	CMPQ CX, R8; JEQ empty; \
	CMPB -1(SI)(CX*1), $0x0d; JNE lfonly; \
	DECQ R13; CMPQ R13, R8; JEQ emptycr; \
	CHECKLINE(done); \
	EMITCR; \
emitted: \
	LEAQ 1(CX), R8; \
	CMPQ R10, $32; JEQ done; \
	droplf; \
	BSFL DX, R9; JZ noname; ADDQ DI, R9; JMP lfloop; \
noname: \
	MOVQ $-1, R9; JMP lfloop; \
lfonly: \
	CHECKLINE(done); \
	EMIT; JMP emitted; \
emptycr: \
	EMITCR; JMP done; \
empty: \
	EMIT; JMP done

// FIRSTLF16 puts the offset of the lowest LF of AX in CX, or jumps to next
// when there is none; FIRSTLF32 does the same with BMI1's TZCNT, which
// sets the carry flag for a zero source.
#define FIRSTLF16(next) \
	TESTL AX, AX; JZ next; BSFL AX, CX
#define FIRSTLF32(next) \
	TZCNTL AX, CX; JCS next

// NAME sets R9 to the first name end of the block when the current
// line's is not known yet.
#define NAME(walk) \
	TESTQ R9, R9; JNS walk; \
	BSFL DX, R9; JZ 3(PC); ADDQ DI, R9; JMP walk; \
	MOVQ $-1, R9

#define START \
	MOVQ b_base+0(FP), SI; \
	MOVQ b_len+8(FP), BX; \
	MOVQ out+24(FP), R11; \
	XORQ R10, R10; \
	XORQ R8, R8; \
	MOVQ $-1, R9; \
	MOVQ BX, R12; \
	XORQ DI, DI; \
	MOVBLZX (SI), R14

// func scanHeadSSE2(b []byte, out *[scanLines]uint64, maxLine int) (n int)
TEXT ·scanHeadSSE2(SB), NOSPLIT, $0-48
	START
	FIRSTBYTE(done16)
	MOVOU scanConsts<>+0x00(SB), X8
	MOVOU scanConsts<>+0x10(SB), X9
	MOVOU scanConsts<>+0x20(SB), X10
	MOVOU scanConsts<>+0x30(SB), X11
	MOVOU scanConsts<>+0x40(SB), X12

block16:
	LEAQ  16(DI), CX
	CMPQ  CX, BX
	JA    tail16
	MOVOU (SI)(DI*1), X0
	MASKS16
	LONE
	// The byte after the block decides whether its last CR is lone.
	BTL   $15, R13
	JCC   lone16
	LEAQ  16(DI), CX
	CMPQ  CX, BX
	JAE   lone16
	CMPB  (SI)(CX*1), $0x0a
	JNE   lone16
	BTRL  $15, R13
	JMP   lone16

tail16:
	// Fewer than 16 bytes are left: read the last 16 and drop the bits of
	// those already seen. A CR at the very end counts as lone: what
	// follows it is unknown.
	CMPQ  DI, BX
	JAE   done16
	MOVOU -16(SI)(BX*1), X0
	MASKS16
	MOVQ DI, CX
	SUBQ BX, CX
	ADDQ $16, CX
	SHRL CX, AX
	SHRL CX, R13
	SHRL CX, DX
	LONE

lone16:
	TESTL R13, R13
	JZ    name16
	CMPQ  R12, BX
	JNE   name16
	BSFL  R13, R12
	ADDQ  DI, R12

name16:
	NAME(walk16)

walk16:
	WALK(lfloop16, FIRSTLF16, lfonly16, emitted16, empty16, emptycr16, noname16, next16, done16, DROPLF16)

next16:
	ADDQ $16, DI
	JMP  block16

done16:
	MOVQ R10, n+40(FP)
	RET

// func scanHeadAVX2(b []byte, out *[scanLines]uint64, maxLine int) (n int)
TEXT ·scanHeadAVX2(SB), NOSPLIT, $0-48
	START
	FIRSTBYTE(done32)
	VPBROADCASTB scanConsts<>+0x00(SB), Y8
	VPBROADCASTB scanConsts<>+0x10(SB), Y9
	VPBROADCASTB scanConsts<>+0x20(SB), Y10
	VPBROADCASTB scanConsts<>+0x30(SB), Y11
	VPBROADCASTB scanConsts<>+0x40(SB), Y12

block32:
	LEAQ    32(DI), CX
	CMPQ    CX, BX
	JA      tail32
	VMOVDQU (SI)(DI*1), Y0
	MASKS32
	LONE
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
	MOVQ DI, CX
	SUBQ BX, CX
	ADDQ $32, CX
	SHRL CX, AX
	SHRL CX, R13
	SHRL CX, DX
	LONE

lone32:
	TESTL R13, R13
	JZ    name32
	CMPQ  R12, BX
	JNE   name32
	BSFL  R13, R12
	ADDQ  DI, R12

name32:
	NAME(walk32)

walk32:
	WALK(lfloop32, FIRSTLF32, lfonly32, emitted32, empty32, emptycr32, noname32, next32, done32, DROPLF32)

next32:
	ADDQ $32, DI
	JMP  block32

done32:
	VZEROUPPER
	MOVQ R10, n+40(FP)
	RET

// lineEndsAVX2 is lineEndsGeneric for b of at least 32 bytes. For each
// block of 32 bytes it counts the LFs, the CRs and the LFs that a CR
// precedes (the CR of the block before included); the last block, which
// may overlap the one before, counts only the bytes not counted yet.
//
// Registers: SI the data, BX the bytes left, AX the count, DX the last CR
// of the block before (0 or 1); R8 and R9 the masks of the block's LFs and
// CRs, R10 and R11 scratch.
TEXT ·lineEndsAVX2(SB), NOSPLIT, $0-32
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), BX
	VPBROADCASTB scanConsts<>+0x00(SB), Y8
	VPBROADCASTB scanConsts<>+0x10(SB), Y9
	XORQ AX, AX
	XORQ DX, DX

block:
	CMPQ BX, $32
	JB last
	VMOVDQU (SI), Y0
	LFCR32(R8, R9)
	POPCNTL R8, R10; ADDQ R10, AX
	POPCNTL R9, R10; ADDQ R10, AX
	// The LFs a CR precedes: the CRs one byte on, the block before's
	// last one at bit 0.
	MOVL R9, R10; SHLL $1, R10; ORL DX, R10; ANDL R8, R10
	POPCNTL R10, R10; SHLQ $1, R10; SUBQ R10, AX
	MOVL R9, DX; SHRL $31, DX
	ADDQ $32, SI
	SUBQ $32, BX
	JMP block

last:
	TESTQ BX, BX
	JZ done
	// The last 32 bytes of b, of which the top BX are new; the byte
	// before each new one is in the block.
	LEAQ -32(SI)(BX*1), SI
	VMOVDQU (SI), Y0
	LFCR32(R8, R9)
	MOVL $32, CX; SUBL BX, CX
	MOVL $-1, R11; SHLL CX, R11 // the new bytes
	MOVL R9, R10; SHLL $1, R10; ANDL R8, R10; ANDL R11, R10
	ANDL R11, R8
	ANDL R11, R9
	POPCNTL R8, R8; ADDQ R8, AX
	POPCNTL R9, R9; ADDQ R9, AX
	POPCNTL R10, R10; SHLQ $1, R10; SUBQ R10, AX

done:
	VZEROUPPER
	MOVQ AX, n+24(FP)
	RET
