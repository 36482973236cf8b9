// SPDX-License-Identifier: GPL-2.0-only
/*
 * Atomic operations on the remote NI, after NetVM chapter 8: the standard
 * fetch-and-phi operations on one 32-bit word, and the wait-queue and
 * semaphore primitives on a block of five words H, T, C, P, S (head, tail,
 * count, pending wakeups, semaphore count).  The operand's page stays
 * locked from the fetch to the write-back and the NI runs one at a time,
 * so each is atomic with respect to every other NetVM access.
 */
#include "fw.h"

enum { H, T, C, P, S };

struct fw_atomic_desc {
	const char *name;
	uint32_t words;
};

static const struct fw_atomic_desc fw_atomics[NVM_AT_COUNT] = {
	[NVM_AT_TAS] = { "testandset", 1 },
	[NVM_AT_INC] = { "incr", 1 },
	[NVM_AT_DEC] = { "decr", 1 },
	[NVM_AT_SWAP] = { "swap", 1 },
	[NVM_AT_CSWAP] = { "cswap", 1 },
	[NVM_AT_ENQUEUE] = { "enqueue", 4 },
	[NVM_AT_DEQUEUE] = { "dequeue", 4 },
	[NVM_AT_NEWHEAD] = { "newhead", 4 },
	[NVM_AT_SEMP] = { "semP", 5 },
	[NVM_AT_SEMV] = { "semV", 5 },
};

uint32_t fw_nv_atomic_words(uint32_t op)
{
	return op < NVM_AT_COUNT ? fw_atomics[op].words : 0;
}

static void enqueue(uint32_t *w, uint32_t id, uint32_t *r)
{
	w[C]++;
	if (w[C] == 1) {
		w[H] = id;
		w[T] = id;
		r[0] = NVM_WQ_EMPTY;
	} else {
		r[0] = w[T];
		w[T] = id;
	}
}

static void dequeue(uint32_t *w, uint32_t *r)
{
	if (w[C] == 0) {
		r[0] = NVM_WQ_EMPTY;
		r[1] = (uint32_t)-1;
	} else if (w[H] != NVM_WQ_EMPTY) {
		w[C]--;
		r[0] = w[H];
		r[1] = w[C];
		w[H] = NVM_WQ_EMPTY;
	} else {
		/* the last one signalled has not named its successor yet */
		w[P]++;
		r[0] = NVM_WQ_EMPTY;
		r[1] = w[C];
	}
}

void fw_nv_atomic_apply(uint32_t op, uint32_t *w, const uint32_t *arg,
			uint32_t *r)
{
	switch (op) {
	case NVM_AT_TAS:
		r[0] = w[0] != 0;
		w[0] = 1;
		break;
	case NVM_AT_INC:
		r[0] = w[0]++;
		break;
	case NVM_AT_DEC:
		r[0] = w[0]--;
		break;
	case NVM_AT_SWAP:
		r[0] = w[0];
		w[0] = arg[0];
		break;
	case NVM_AT_CSWAP:
		r[0] = w[0];
		if (w[0] == arg[0])
			w[0] = arg[1];
		break;
	case NVM_AT_ENQUEUE:
		enqueue(w, arg[0], r);
		break;
	case NVM_AT_DEQUEUE:
		dequeue(w, r);
		break;
	case NVM_AT_NEWHEAD:
		if (w[P] > 0) {
			/* a dequeue came in between: the new head is signalled
			 * at once by its predecessor */
			w[P]--;
			w[C]--;
			r[0] = 1;
			r[1] = w[C];
		} else {
			w[H] = arg[0];
			r[0] = 0;
			r[1] = w[C];
		}
		break;
	case NVM_AT_SEMP:
		r[1] = w[S];
		if (w[S] > 0) {
			w[S]--;
			r[0] = NVM_WQ_EMPTY;
		} else {
			enqueue(w, arg[0], r);
		}
		break;
	case NVM_AT_SEMV:
		if (w[C] > 0) {
			dequeue(w, r);
		} else {
			w[S]++;
			r[0] = NVM_WQ_EMPTY;
			r[1] = w[C];
		}
		r[2] = w[S];
		break;
	default:
		break;
	}
}
