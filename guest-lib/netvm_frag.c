// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/* libnetvm internal: fragmentation of transfers (see netvm_frag.h). */
#include <netvm/netvm_fw.h>

#include "netvm_frag.h"

static uint64_t page_left(uint64_t a)
{
	return NVM_PAGE_SIZE - (a & (NVM_PAGE_SIZE - 1));
}

uint32_t nvl_frag_len(uint64_t local, uint64_t remote, uint64_t left)
{
	uint64_t n = left;

	if (n > page_left(local))
		n = page_left(local);
	if (n > page_left(remote))
		n = page_left(remote);
	return (uint32_t)n;
}

void nvl_frag_begin(struct nvl_frag_iter *it, uint64_t local, uint64_t remote,
		    uint64_t size, int is_write)
{
	it->local = local;
	it->remote = remote;
	it->left = size;
	it->is_write = is_write;
}

int nvl_frag_next(struct nvl_frag_iter *it, struct nvl_frag *f)
{
	if (!it->left)
		return 0;
	f->local = it->local;
	f->remote = it->remote;
	f->len = nvl_frag_len(it->local, it->remote, it->left);
	f->inl = it->is_write && f->len <= NVM_INLINE_MAX;
	it->local += f->len;
	it->remote += f->len;
	it->left -= f->len;
	f->last = it->left == 0;
	return 1;
}

uint64_t nvl_frag_count(uint64_t local, uint64_t remote, uint64_t size)
{
	struct nvl_frag_iter it;
	struct nvl_frag f;
	uint64_t n = 0;

	nvl_frag_begin(&it, local, remote, size, 0);
	while (nvl_frag_next(&it, &f))
		n++;
	return n;
}
