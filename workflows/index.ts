// Entry point of autonode's workflow bundle: every workflow the workers register is
// exported from here. (The lifecycle workflows arrive with their issues.)
export {};
