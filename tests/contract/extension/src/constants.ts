export const TEMPERATURE = 0.5;
export const MAX_OUTPUT_TOKENS = 512;
export const TOP_P = 0.9;
export const MAX_LINES = 5;
export const DEBOUNCE_DELAY = 350;