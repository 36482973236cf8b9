// SPDX-License-Identifier: MIT
/*
 * The provider's entry point: libfabric loads every lib*-fi.so in its
 * provider directory (or FI_PROVIDER_PATH) and calls fi_prov_ini.
 */
#include "fnv.h"

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
	return &fnv_prov;
}
