/* Stand-in for the vendor header under the ATA SIMT emulator (kernels/emu). */
#include "../emu_api.h"
