#include "tap.h"
int main(void){ok(1,"x");return tap_done();}
