// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/* libnetvm internal: channel credits (see netvm_credit.h). */
#include <errno.h>

#include "netvm_credit.h"

int nvl_credit_init(struct nvl_credit *c, uint32_t nbuf, uint32_t refill)
{
	if (!c || nbuf < 2 || refill < 1 || refill > nbuf - 1)
		return -EINVAL;
	c->nbuf = nbuf;
	c->refill = refill;
	c->avail = nbuf - 1;
	c->snext = 0;
	c->rnext = 0;
	c->freed = 0;
	return 0;
}

int nvl_credit_take(struct nvl_credit *c)
{
	uint32_t slot;

	if (!c->avail)
		return -EAGAIN;
	c->avail--;
	slot = c->snext;
	c->snext = (c->snext + 1) % c->nbuf;
	return (int)slot;
}

void nvl_credit_replenish(struct nvl_credit *c)
{
	c->avail += c->refill;
}

uint32_t nvl_credit_recv(struct nvl_credit *c, int *replenish)
{
	uint32_t slot = c->rnext;

	c->rnext = (c->rnext + 1) % c->nbuf;
	c->freed++;
	*replenish = c->freed % c->refill == 0;
	return slot;
}
