// SPDX-License-Identifier: MIT
/*
 * The provider's entry point: libfabric loads every lib*-fi.so in its
 * provider directory (or FI_PROVIDER_PATH) and calls fi_prov_ini.
 */
#include <stdio.h>
#include <string.h>

#include "fnv.h"

/*
 * fi_tostr(fid, FI_TYPE_FID) calls this with the start of its buffer and
 * a length that already leaves out what the buffer holds (its return is
 * ignored): appending within that length past what is there cannot
 * overrun, whichever of the two libfabric means.
 */
int fnv_tostr(const struct fid *fid, char *buf, size_t len)
{
	static const char *const names[] = {
		[FI_CLASS_FABRIC] = "fabric", [FI_CLASS_DOMAIN] = "domain",
		[FI_CLASS_EP] = "endpoint", [FI_CLASS_AV] = "address vector",
		[FI_CLASS_MR] = "memory region", [FI_CLASS_EQ] = "event queue",
		[FI_CLASS_CQ] = "completion queue",
	};
	const char *name = fid->fclass < sizeof(names) / sizeof(names[0]) &&
			   names[fid->fclass] ? names[fid->fclass] : "fid";
	size_t used;

	if (!buf || !len)
		return -FI_EINVAL;
	used = strnlen(buf, len);
	if (used == len)
		return -FI_ETOOSMALL;
	snprintf(buf + used, len - used, "%s %s: %p\n", FNV_NAME, name,
		 (const void *)fid);
	return 0;
}

void fnv_nap_params(int64_t *spin_ns, int64_t *nap_us)
{
	int spin = FNV_SPIN_US, nap = FNV_NAP_US;

	fi_param_get_int(&fnv_prov, "spin_us", &spin);
	fi_param_get_int(&fnv_prov, "nap_us", &nap);
	*spin_ns = spin < 0 ? -1 : (int64_t)spin * 1000;
	*nap_us = nap < 1 ? 1 : nap;
}

size_t fnv_rdv_read_max_param(void)
{
	int max = FNV_RDV_READ_MAX;

	fi_param_get_int(&fnv_prov, "rdv_read_max", &max);
	return max < 0 ? 0 : (size_t)max;
}

unsigned int fnv_yield_param(void)
{
	int every = FNV_YIELD;

	fi_param_get_int(&fnv_prov, "yield", &every);
	return every < 0 ? 0 : (unsigned int)every;
}

static void fnv_cleanup(void)
{
}

struct fi_provider fnv_prov = {
	.name = FNV_NAME,
	.version = FNV_VERSION,
	.fi_version = FNV_API,
	.getinfo = fnv_getinfo,
	.fabric = fnv_fabric_open,
	.cleanup = fnv_cleanup,
};

FI_EXT_INI
{
	/* listed by fi_info -e; read from FI_NETVM_SPIN_US, _NAP_US and
	 * _RDV_READ_MAX */
	fi_param_define(&fnv_prov, "spin_us", FI_PARAM_INT,
			"a completion queue read empty this long (us) in a row sleeps in the NIC's interrupt; -1: never (default %d)",
			FNV_SPIN_US);
	fi_param_define(&fnv_prov, "nap_us", FI_PARAM_INT,
			"longest such sleep, us (default %d)", FNV_NAP_US);
	fi_param_define(&fnv_prov, "rdv_read_max", FI_PARAM_INT,
			"RDM messages from another node up to this many bytes are read into the receive buffer, larger ones written by their sender; 0: none read so (default %d)",
			FNV_RDV_READ_MAX);
	fi_param_define(&fnv_prov, "yield", FI_PARAM_INT,
			"every this many empty completion queue reads in a row, offer the host CPU to another vCPU; 0: never (default %d)",
			FNV_YIELD);
	return &fnv_prov;
}
