// A module that fails while it loads.
export {};
throw new Error("THIS_MODULE_NEEDS_A_CONFIG is not set");
