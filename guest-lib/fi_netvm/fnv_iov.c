// SPDX-License-Identifier: MIT
/*
 * Scatter-gather lists (struct iovec) as the provider's calls receive
 * them: their total, and copying bytes into them.  A file of its own so
 * that the RDM unit test (guest-lib/tests/test_fnv_rdm.c) links the same
 * code as the provider.
 */
#include <stdint.h>
#include <string.h>

#include "fnv.h"

/* The bytes of n pieces; SIZE_MAX if they overflow a size_t (which a
 * wrapped sum would hide from the size checks, and the copy overrun). */
size_t fnv_iov_total(const struct iovec *iov, size_t n)
{
	size_t t = 0;

	for (size_t i = 0; i < n; i++) {
		if (iov[i].iov_len > SIZE_MAX - t)
			return SIZE_MAX;
		t += iov[i].iov_len;
	}
	return t;
}

void fnv_iov_scatter(const struct iovec *iov, size_t count, size_t pos,
		     const void *src, size_t n)
{
	const uint8_t *s = src;

	for (size_t i = 0; i < count && n; i++) {
		size_t k;

		if (pos >= iov[i].iov_len) {
			pos -= iov[i].iov_len;
			continue;
		}
		k = iov[i].iov_len - pos < n ? iov[i].iov_len - pos : n;
		memcpy((uint8_t *)iov[i].iov_base + pos, s, k);
		s += k;
		n -= k;
		pos = 0;
	}
}
