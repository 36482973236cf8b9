/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * libnetvm internal: a channel's credit and cursor bookkeeping (thesis
 * table 14), kept apart from the transfers so that it can be unit-tested.
 *
 * The sender starts with nbuf - 1 credits (one entry stays reserved: the
 * message the receiver holds until its next receive); each send takes
 * one.  The receiver counts the messages it has received and returns
 * refill credits every refill of them.  Hence at most nbuf messages are
 * ever unconsumed or held, and the sender never overwrites one.
 */
#ifndef NETVM_CREDIT_H
#define NETVM_CREDIT_H

#include <stdint.h>

struct nvl_credit {
	uint32_t nbuf;
	uint32_t refill;
	uint32_t avail;		/* sender: credits */
	uint32_t snext;		/* sender: next entry to fill */
	uint32_t rnext;		/* receiver: next entry to read */
	uint32_t freed;		/* receiver: messages received */
};

/* -EINVAL unless nbuf >= 2 and 1 <= refill <= nbuf - 1. */
int nvl_credit_init(struct nvl_credit *c, uint32_t nbuf, uint32_t refill);
/* Sender: the entry to fill next (a credit taken), or -EAGAIN (no credit:
 * wait for a replenishment). */
int nvl_credit_take(struct nvl_credit *c);
/* Sender: one replenishment arrived. */
void nvl_credit_replenish(struct nvl_credit *c);
/* Receiver: the entry of the message just notified; *replenish is set to
 * 1 when the sender must now be sent a replenishment. */
uint32_t nvl_credit_recv(struct nvl_credit *c, int *replenish);

#endif /* NETVM_CREDIT_H */
