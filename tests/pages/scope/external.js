function external() { spin(2); }
external();
