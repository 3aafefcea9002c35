// grammar/errors.h — lockstep::Error and its subclasses; the definitions are public
// (include/lockstep/errors.h).
#pragma once

#include "lockstep/errors.h"
