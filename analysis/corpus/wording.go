package corpus

import "interviewd/analysis"

// wording is one product's study: its questions, objectives, planted themes and the
// everyday talk around them. Templates use {a|b|c} for a choice of words.
type wording struct {
	questions     []analysis.Question
	objectives    []string
	unaddressed   int
	themes        []theme
	split         int // the theme with two sides (say: too high, other: fair)
	segmentTheme  int
	segmentKey    string
	segmentValues [2]string // [0] rarely has the segment theme, [1] mostly does
	anythingElse  int
	greeting      string
	goodbye       string
	hello         []string
	probes        []string
	leadIns       []string
	skips         []string
	noise         []string
	lists         map[string][]string // {$name} in a template picks from lists[name]
	short         map[int][]string
}

// theme is one planted theme: its home question and its many wordings.
type theme struct {
	name     string
	question int
	say      []string
	other    []string // the other side, for the split theme
}

var wordings = [Wordings]*wording{projectTool, mealDelivery}

var projectTool = &wording{
	questions: []analysis.Question{
		{Text: "How did you get started with the tool?", Kind: analysis.QuestionVerbatim},
		{Text: "What do you like most about it?", Kind: analysis.QuestionVerbatim},
		{Text: "What frustrates you when you use it?", Kind: analysis.QuestionVerbatim},
		{Text: "How do you feel about the price you pay?", Kind: analysis.QuestionVerbatim},
		{Text: "How does your team work together in it?", Kind: analysis.QuestionVerbatim},
		{Text: "If you could change one thing, what would it be?", Kind: analysis.QuestionVerbatim},
		{Text: "When did you last ask us for help, and how did it go?", Kind: analysis.QuestionVerbatim},
		{Text: "How often do you open it in a typical week?", Kind: analysis.QuestionScreener},
		{Text: "Which devices do you use it on?", Kind: analysis.QuestionVerbatim},
		{Text: "How did you hear about us?", Kind: analysis.QuestionVerbatim},
		{Text: "What would you tell a colleague who is thinking of trying it?", Kind: analysis.QuestionVerbatim},
		{Text: "Is there anything else you would like to add?", Kind: analysis.QuestionVerbatim},
	},
	objectives: []string{
		"Understand how customers perceive the pricing and value for money.",
		"Identify obstacles during onboarding and setup.",
		"Learn how teams collaborate and share work in the product.",
		"Assess the speed and responsiveness of the app.",
		"Explore demand for invoicing and tax returns.",
	},
	unaddressed:   4,
	split:         5,
	segmentTheme:  2,
	segmentKey:    "plan",
	segmentValues: [2]string{"free", "pro"},
	anythingElse:  11,
	greeting:      "Hi, thanks for joining. I'll ask a few questions about how you use the tool.",
	goodbye:       "That's all from me. Thank you for your time!",
	hello:         []string{"Hi!", "Sure, happy to help.", "Hello, sounds good.", "Okay, go ahead."},
	probes:        []string{"Could you tell me more about that?", "What makes you say that?", "Can you give me an example?"},
	leadIns:       []string{"Good question.", "Hmm, let me think.", "Sure.", "Oh, that one is easy.", "Right."},
	skips:         []string{"skip", "Pass.", "No comment.", "I'd rather not say."},
	themes: []theme{
		{name: "onboarding", question: 0, say: []string{
			"Getting set up took {far longer than|much longer than|twice as long as} I expected.",
			"The {onboarding|setup|initial setup} was {confusing|a real struggle|hard to follow}.",
			"I had to {watch three videos|read the docs twice|ask a colleague} just to {import our projects|get the workspace configured|invite my team}.",
			"{Importing|Migrating|Moving} our old {projects|boards} {was painful|took a whole weekend|kept failing halfway}.",
			"The first week was rough because nothing about the {setup|configuration|onboarding} was obvious.",
			"There was no clear guide for {setting up|configuring} the {workspace|permissions|project templates}.",
			"{Setup|Onboarding} asks for {too many decisions|a dozen settings|all sorts of choices} before you can do anything.",
		}},
		{name: "performance", question: 2, say: []string{
			"The app {is|gets|feels} {slow|sluggish|laggy} {when a board has lots of cards|in the afternoons|on big projects}.",
			"Pages take {ages|forever|ten seconds or more} to load.",
			"{Search|Syncing|Scrolling the timeline} {lags|freezes|stalls} all the time.",
			"It {freezes|hangs|locks up} whenever I {open a large project|attach a file|switch boards}.",
			"Loading times are {terrible|a real drag|painfully long}.",
			"Everything {grinds to a halt|slows to a crawl} once we pass a few hundred tasks.",
			"I often stare at a {spinner|loading wheel|blank screen} waiting for {the board|my tasks|the page} to appear.",
		}},
		{name: "collaboration", question: 4, say: []string{
			"{Sharing|Handing off} work with my {team|colleagues|teammates} is {effortless|really easy|so simple}.",
			"We {comment on|discuss|review} each other's tasks right {inside the board|on the card|in the thread}, which saves {meetings|emails|a lot of back and forth}.",
			"Assigning tasks to {teammates|people on my team|colleagues} and seeing who is doing what is {great|brilliant|the best part}.",
			"The shared {boards|workspaces|timelines} keep {the whole team|everyone|all five of us} on the same page.",
			"Real-time {editing|updates|co-editing} means my {colleagues|team} always see the latest version.",
			"{Mentioning|Tagging} a {colleague|teammate} pulls them straight into the conversation.",
		}},
		{name: "support", question: 6, say: []string{
			"{Support|The support team|Customer service} {answered|replied|got back to me} within {an hour|minutes|the same morning}.",
			"When I {had a problem|got stuck|hit a bug}, {the help desk|support|someone from your team} {sorted it out|fixed it|walked me through it} {quickly|right away|patiently}.",
			"The {support staff|help desk people|agents on chat} are {friendly|kind|genuinely helpful} and know the product well.",
			"I {emailed|messaged|chatted with} support and {had an answer|got a fix|heard back} {before lunch|within the hour|the same day}.",
			"{Honestly|Really}, the {customer support|help desk} is the reason we stay.",
			"Whenever I {reach out|ask for help|open a ticket}, a real person {responds|answers|picks it up} fast.",
		}},
		{name: "offline mobile", question: 5, say: []string{
			"I wish the {mobile app|phone app|app on my phone} worked {offline|without a connection|on the train}.",
			"It would help if I could {edit|update|check} tasks {offline|without internet|on a flight}.",
			"Could you add an offline mode for the {mobile|phone} app?",
			"On my phone I {can't|cannot} {open my boards|see my tasks|do anything} {without signal|when the connection drops|underground}.",
			"I'd like the {mobile|phone} version to {keep working|save changes} when I lose {signal|connection|wifi}.",
			"{An offline mode|Working offline} on {mobile|my phone} is the one thing I'm missing.",
		}},
		{name: "price", question: 3, say: []string{
			"The {price|cost|subscription} is {too high|way too steep|more than we can justify}.",
			"{Honestly|Frankly}, it costs too much for {what we get|a team our size|what we use}.",
			"Paying {twelve|fifteen|twenty} dollars a {seat|user} each month feels {expensive|like a lot|overpriced}.",
			"We {nearly|almost} cancelled because of the {price|cost|price increase}.",
			"For a small team the {pricing|price} is hard to justify.",
		}, other: []string{
			"The {price|cost|subscription} is {fair|reasonable|about right} for what you get.",
			"I think the {pricing|price} is {fair|good value|sensible}.",
			"{Twelve|Fifteen|Twenty} dollars a {seat|user} is {reasonable|fair|a fair deal} for a tool we use every day.",
			"Compared with {other tools|the alternatives|what we used before}, the {price|pricing|cost} is {fair|decent|reasonable}.",
			"It's {worth the money|good value for money|well worth what we pay}.",
		}},
	},
	// Everyday talk: a grammar over long lists (lifeLists), so asides rarely repeat.
	noise: []string{
		"{$who} {$does} the {$adj} {$thing} {$when}.",
		"{$who} {$does} our {$adj} {$thing}.",
		"{$who} {$does} {$adj} {$thing}s.",
		"{$who} {$does} a {$adj} {$thing}.",
		"Our {$thing} is {$adj}, and {$who2} {$does} it.",
		"It's fine for what I do.",
		"Not much to add.",
	},
	lists: lifeLists,
	short: map[int][]string{
		7: {"Every day.", "Daily", "A few times a week.", "Most days", "Once or twice a week.", "every day"},
		8: {"Laptop and phone.", "Just my laptop.", "Desktop mostly.", "Phone and tablet", "laptop and phone"},
		9: {"A friend.", "Google.", "A podcast", "My manager.", "a friend"},
	},
}

var mealDelivery = &wording{
	questions: []analysis.Question{
		{Text: "Walk me through the first time you ordered.", Kind: analysis.QuestionVerbatim},
		{Text: "What keeps you coming back?", Kind: analysis.QuestionVerbatim},
		{Text: "What goes wrong with your orders?", Kind: analysis.QuestionVerbatim},
		{Text: "What do you think of the delivery fees?", Kind: analysis.QuestionVerbatim},
		{Text: "Do you ever order together with family or coworkers?", Kind: analysis.QuestionVerbatim},
		{Text: "What's missing from the service today?", Kind: analysis.QuestionVerbatim},
		{Text: "Have you ever contacted the help centre, and what happened?", Kind: analysis.QuestionVerbatim},
		{Text: "How many times a month do you order?", Kind: analysis.QuestionScreener},
		{Text: "Which restaurants do you usually pick?", Kind: analysis.QuestionVerbatim},
		{Text: "Where did you first hear about the service?", Kind: analysis.QuestionVerbatim},
		{Text: "Would you recommend it to a friend?", Kind: analysis.QuestionVerbatim},
		{Text: "Anything else before we finish?", Kind: analysis.QuestionVerbatim},
	},
	objectives: []string{
		"Find out what customers think of the delivery fees.",
		"Understand what makes a first order hard to complete.",
		"Learn whether households and offices order as a group.",
		"Measure how often deliveries arrive late or cold.",
		"Gauge interest in buying groceries and household supplies through us.",
	},
	unaddressed:   4,
	split:         5,
	segmentTheme:  2,
	segmentKey:    "membership",
	segmentValues: [2]string{"basic", "plus"},
	anythingElse:  11,
	greeting:      "Hello and welcome! I'd love to hear about your experience ordering food with us.",
	goodbye:       "Thanks so much, that's everything.",
	hello:         []string{"Hey.", "Hi there.", "Sure thing.", "Great, let's do it."},
	probes:        []string{"Why do you think that is?", "Tell me a bit more?", "How did that make you feel?"},
	leadIns:       []string{"Oh.", "Let me see.", "Well, okay.", "Ha, yes.", "Fair question."},
	skips:         []string{"pass", "Skip.", "no comment", "Next question, please."},
	themes: []theme{
		{name: "first order", question: 0, say: []string{
			"Entering my {address|postcode|card details} took {several tries|ages|three attempts}.",
			"The checkout kept {rejecting|refusing|bouncing} my {card|voucher|promo code}.",
			"I {couldn't|could not} figure out where to {add a tip|leave delivery instructions|change the address} at checkout.",
			"Signing up wanted {my phone number|a verification text|a password} {twice|before showing any menus|at every step}.",
			"My first order {almost|nearly} didn't go through because the {payment page|checkout|sign-up form} {froze|timed out|errored}.",
			"{Creating an account|Registering|Signing up} before I could even browse was {annoying|off-putting|a pain}.",
		}},
		{name: "late cold food", question: 2, say: []string{
			"The {driver|courier|rider} turned up {forty minutes|an hour|half an hour} late.",
			"My {food|dinner|curry|pizza} {arrived|showed up|came} {cold|lukewarm|soggy}.",
			"Deliveries {run|are} {late|behind schedule|way past the estimate} {most Fridays|every weekend|at dinner time}.",
			"The estimated arrival {keeps slipping|jumps around|is never right}, so we eat {late|at nine|after the kids are in bed}.",
			"By the time the {bag|order|meal} reaches me the {fries|noodles|burgers} are {stone cold|limp|congealed}.",
			"{Waiting|Hanging around} for a {courier|driver} who is {stuck|lost|going in circles} happens {far too often|weekly|all the time}.",
		}},
		{name: "group orders", question: 4, say: []string{
			"{My flatmates|The family|My kids and I} put our picks into one {basket|cart|order} {together|from our own phones}.",
			"At work we {split|share} one {order|delivery} and everybody {adds|chooses} their own {lunch|dish|meal}.",
			"The {group order|shared basket|joint cart} link means {nobody|no one} has to {collect cash|pay someone back|chase people}.",
			"{Friday lunch|Team dinners|Sunday takeaway} is a {group order|shared basket} now, {everyone|all of us} picks from their {desk|sofa|phone}.",
			"{Splitting|Dividing} the {bill|payment|total} {automatically|per person} after a {joint|shared|group} order is {brilliant|so handy|a lifesaver}.",
		}},
		{name: "refund help", question: 6, say: []string{
			"The help centre {refunded|credited|reimbursed} me {straight away|within minutes|without any fuss}.",
			"When an {item|dish|drink} was {missing|wrong|spilled}, {an agent|the chat|someone} {sorted a refund|gave me credit|made it right} {quickly|immediately|in one message}.",
			"{Chat|Phone|Email} support {apologised|was lovely|was kind} and {refunded|credited} the {whole order|missing part|delivery fee}.",
			"I {reported|flagged|complained about} a {spilled|wrong|damaged} order and had my money back {the same evening|in an hour|before I finished typing}.",
			"{Getting|Claiming} a refund through the help centre is {painless|easy|quick}.",
		}},
		{name: "scheduled orders", question: 5, say: []string{
			"I wish I could {schedule|book|plan} {an order|a delivery|dinner} {for later|a day ahead|for Saturday night}.",
			"It would help to {pre-order|set up|queue} {lunch|meals|a delivery} {for tomorrow|in advance|for the week}.",
			"Could you let us {book|schedule|time} deliveries {ahead of time|for a set hour|days in advance}?",
			"{Scheduling|Booking} a {delivery|meal} for {a set time|later in the evening|the weekend} is {what I'm missing|the gap|something I'd use constantly}.",
			"I'd love {recurring|repeat|weekly} orders that {arrive|turn up|land} at the same time {every week|each Monday|without me tapping anything}.",
		}},
		{name: "fees", question: 3, say: []string{
			"The {delivery fee|service charge|fees} {is|feel} {far too high|way too steep|ridiculous} for a {short|two-mile|ten-minute} trip.",
			"{Fees|Charges|Surcharges} {add|tack} {almost half|a third|a fortune} onto {the bill|my total|every order}.",
			"Paying {four|five|six} pounds just for delivery {is|feels} {a rip-off|too much|excessive}.",
			"I {order less|switched to collecting|stopped ordering at weekends} because the {fees|delivery charges} are {too high|so expensive|outrageous}.",
			"{Small|Service|Busy-time} {fees|charges} make {everything|cheap meals|a coffee} {overpriced|pricey|silly}.",
		}, other: []string{
			"The {delivery fee|fees|service charge} {is|seem} {fair|reasonable|fine} {for the convenience|given the distance|for door-to-door}.",
			"{Four|Five|Two} pounds for delivery is {fair|reasonable|a fair price} {to me|honestly|when it's raining}.",
			"I don't mind the {fees|charges|delivery fee}, they're {fair|sensible|reasonable}.",
			"Compared with {taxis|driving there myself|other apps} the {fees|charges} are {fair|decent|pretty reasonable}.",
			"{Fees|Charges} {seem|are} {fair|reasonable|justified}, {drivers|couriers|riders} need paying.",
		}},
	},
	// Everyday talk: a grammar over long lists (lifeLists), so asides rarely repeat.
	noise: []string{
		"{$who} {$does} the {$adj} {$thing} {$when}.",
		"{$who} {$does} {$adj} {$thing}s.",
		"{$who} {$does} a {$adj} {$thing}.",
		"{$who} and I {$do}.",
		"Not much else to say.",
		"Honestly I don't think about it much.",
		"It's {alright|okay|decent} overall.",
	},
	lists: lifeLists,
	short: map[int][]string{
		7:  {"Twice.", "About four times.", "Weekly.", "Once or twice.", "twice", "Maybe ten."},
		8:  {"Pizza places.", "The Thai one.", "Burgers.", "Sushi", "pizza places"},
		9:  {"Instagram.", "A friend", "Billboard.", "instagram"},
		10: {"Yes.", "Probably, yes.", "Yes!", "Maybe."},
	},
}

// lifeLists is everyday vocabulary for asides: long lists so that no word of them
// recurs across interviews the way a theme does.
var lifeLists = map[string][]string{
	"who": {"My sister", "A former boss", "Our accountant", "The new intern", "My business partner", "A client",
		"My flatmate", "Our landlord", "A recruiter", "My cousin", "An old classmate", "Our caretaker",
		"A freelancer", "My neighbour", "The founder", "My dad", "A supplier", "My uncle", "Grandma",
		"The vicar", "Our plumber", "My godson", "A pen pal", "The babysitter", "My driving instructor",
		"Our vet", "My tutor", "The treasurer", "My stepmum", "A volunteer", "Our lodger", "The chef next door",
		"My niece", "An electrician", "The choir leader", "My physio", "Our postman", "The curator", "I", "We"},
	"who2": {"my sister", "our accountant", "the intern", "a client", "my cousin", "the founder", "our caretaker",
		"my uncle", "grandma", "the vicar", "our plumber", "my godson", "the babysitter", "our vet", "my tutor",
		"the treasurer", "a volunteer", "my niece", "our postman", "the curator", "I", "we"},
	"does": {"repaints", "sorts", "waters", "restores", "borrows", "polishes", "labels", "photographs", "measures",
		"repairs", "sketches", "varnishes", "collects", "delivers", "weighs", "sews", "frames", "hoovers",
		"catalogues", "decorates", "bakes", "carves", "insures", "rents", "sells", "tunes", "walks", "feeds",
		"prunes", "wraps", "assembles", "washes", "irons", "stacks", "counts", "inspects", "moves", "paints", "fixes"},
	"do": {"go fishing", "paint fences", "bake bread", "walk the dogs", "play darts", "go bouldering",
		"watch old films", "visit markets", "do crosswords", "ride tandem", "sing karaoke", "grow tomatoes"},
	"adj": {"wooden", "vintage", "blue", "enormous", "tiny", "antique", "broken", "spare", "borrowed", "secondhand",
		"striped", "rusty", "velvet", "copper", "plastic", "ceramic", "woollen", "leather", "glass", "marble",
		"folding", "electric", "handmade", "inflatable", "silver", "muddy", "brass", "cotton", "bamboo", "velour",
		"tartan", "neon", "oak", "pine", "wicker", "linen", "crooked", "polka-dot", "heavy", "portable"},
	"thing": {"bicycle", "piano", "greenhouse", "canoe", "aquarium", "wardrobe", "bookcase", "lawnmower", "kettle",
		"hammock", "telescope", "sewing machine", "trampoline", "caravan", "violin", "chandelier", "scooter",
		"birdhouse", "rocking chair", "kayak", "typewriter", "wheelbarrow", "sofa", "ladder", "jukebox",
		"tent", "barbecue", "fountain", "harp", "mirror", "clock", "quilt", "trolley", "lantern", "drum kit",
		"tricycle", "hat stand", "easel", "pram", "chess set", "record player", "sledge", "fish tank",
		"dollhouse", "toolbox", "umbrella", "saddle", "tapestry", "globe", "accordion"},
	"when": {"on Monday mornings", "late at night", "over breakfast", "on the bus", "at weekends",
		"before school pickup", "after the gym", "on Sunday evenings", "first thing", "around four",
		"in quiet weeks", "at month end", "on the train home", "after dinner", "every other Thursday",
		"in the spring", "before holidays", "at dawn", "during the rain", "on bank holidays", "at midnight",
		"each autumn", "after church", "on my birthday", "in January", "during half term", "at harvest",
		"when it snows", "on Tuesdays", "twice a year", "at teatime", "after the school fair", "on leap days",
		"before the carnival", "during lent", "after the derby", "on windy afternoons", "at the equinox",
		"during the regatta", "after choir", "before the village fete", "on pancake day", "in late August",
		"when the clocks change", "after the harvest supper", "on Wednesday evenings", "at low tide",
		"before sunrise", "during the heatwave", "on market days"},
	"place": {"Leeds", "Porto", "Denver", "a village near Lyon", "Melbourne", "Nairobi", "Toronto", "Glasgow",
		"Austin", "Seoul", "Bergen", "Cork", "Tallinn", "Perth", "Valencia", "Quito", "Osaka", "Lagos"},
}
