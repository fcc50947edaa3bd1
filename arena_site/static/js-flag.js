// Loaded blocking in <head>: the page knows it is scripted before anything is drawn, so the
// styles for the enhanced board apply from the first paint (no layout shift).
document.documentElement.className = "js";
