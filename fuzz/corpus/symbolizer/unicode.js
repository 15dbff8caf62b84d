const é = () => "😀";
function 𝒻() { return `${é()}😀`; }
